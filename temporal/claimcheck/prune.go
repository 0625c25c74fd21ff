package claimcheck

import (
	"bytes"
	"context"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// DefaultGrace is how recently used a blob must be for [Prune] to keep it
// whatever the references say: a payload is stored before the history
// event that refers to it is written.
const DefaultGrace = time.Hour

// PruneOptions configure [Prune]; the zero value of each field is its
// default.
type PruneOptions struct {
	// Grace keeps blobs written or put again within it (0 = DefaultGrace).
	Grace time.Duration
	// DryRun counts what would be deleted and deletes nothing.
	DryRun bool
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// PruneStats is what [Prune] found and did.
type PruneStats struct {
	Blobs      int   `json:"blobs"`      // blobs in the store
	Referenced int   `json:"referenced"` // of them, referred to
	Recent     int   `json:"recent"`     // unreferenced but within the grace period
	Deleted    int   `json:"deleted"`    // deleted (or, with DryRun, to delete)
	Bytes      int64 `json:"bytes"`      // their size
	Temp       int   `json:"temp"`       // temporary files of crashed writes removed
}

// Store and Sweeper together: what Prune cleans.
type SweepStore interface {
	Store
	Sweeper
}

// Prune deletes the blobs of s that nothing refers to any more: live holds
// the sums referred to from outside the store (see [LiveRefs]); a blob that
// holds a whole payload can refer to other blobs, and those are kept too.
// Blobs used within the grace period are kept. Safe while workers run, as
// long as live was taken after the grace period's start.
func Prune(ctx context.Context, s SweepStore, live map[Sum]bool, opts PruneOptions) (_ PruneStats, err error) {
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Payload blobs refer to string blobs: follow them (one level).
	marked := make(map[Sum]bool, len(live))
	for sum := range live {
		marked[sum] = true
	}
	for sum := range live {
		b, err := s.Get(ctx, sum)
		if err != nil || !bytes.HasPrefix(b, []byte(payloadMagic)) {
			continue // missing (nothing to keep) or a string blob
		}
		FindRefs(b, marked)
	}
	cutoff := opts.Now().Add(-opts.Grace)
	var st PruneStats
	if t, ok := s.(interface {
		RemoveTemp(context.Context, time.Time) (int, error)
	}); ok && !opts.DryRun {
		if st.Temp, err = t.RemoveTemp(ctx, cutoff); err != nil {
			return st, err
		}
	}
	for info, err := range s.Blobs(ctx) {
		if err != nil {
			return st, err
		}
		st.Blobs++
		switch {
		case marked[info.Sum]:
			st.Referenced++
		case info.Used.After(cutoff):
			st.Recent++
		default:
			if !opts.DryRun {
				if err := s.Delete(ctx, info.Sum); err != nil {
					return st, err
				}
			}
			st.Deleted++
			st.Bytes += info.Size
		}
	}
	return st, nil
}

// FindRefs adds the sums of the references in b (any bytes: a JSON
// payload, a marshalled history event) to into.
func FindRefs(b []byte, into map[Sum]bool) {
	prefix := []byte(RefPrefix)
	for {
		i := bytes.Index(b, prefix)
		if i < 0 {
			return
		}
		b = b[i+len(prefix):]
		if len(b) >= 2*len(Sum{}) {
			if sum, err := ParseSum(string(b[:2*len(Sum{})])); err == nil {
				into[sum] = true
			}
		}
	}
}

// LiveRefs returns the sums referred to by the workflows of c's namespace
// that Temporal still keeps: the history of every execution (open, or
// closed within the namespace's retention), the pending state of the open
// ones (heartbeat details), and the actions of the schedules. A failure to
// read any of it is an error: pruning on a partial view would delete blobs
// still in use.
func LiveRefs(ctx context.Context, c client.Client, namespace string) (map[Sum]bool, error) {
	svc := c.WorkflowService()
	live := map[Sum]bool{}
	scan := func(m proto.Message) error {
		b, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		FindRefs(b, live)
		return nil
	}
	var token []byte
	for {
		resp, err := svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: namespace, NextPageToken: token, PageSize: 1000})
		if err != nil {
			return nil, fmt.Errorf("claimcheck: list workflows: %w", err)
		}
		for _, ex := range resp.Executions {
			if err := scan(ex); err != nil { // the memo
				return nil, err
			}
			if err := historyRefs(ctx, svc, namespace, ex.GetExecution(), scan); err != nil {
				return nil, err
			}
			if ex.GetCloseTime() == nil {
				d, err := svc.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{Namespace: namespace, Execution: ex.GetExecution()})
				if err != nil {
					return nil, fmt.Errorf("claimcheck: describe workflow %s: %w", ex.GetExecution().GetWorkflowId(), err)
				}
				if err := scan(d); err != nil {
					return nil, err
				}
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	token = nil
	for {
		resp, err := svc.ListSchedules(ctx, &workflowservice.ListSchedulesRequest{Namespace: namespace, NextPageToken: token, MaximumPageSize: 1000})
		if err != nil {
			return nil, fmt.Errorf("claimcheck: list schedules: %w", err)
		}
		for _, s := range resp.Schedules {
			d, err := svc.DescribeSchedule(ctx, &workflowservice.DescribeScheduleRequest{Namespace: namespace, ScheduleId: s.GetScheduleId()})
			if err != nil {
				return nil, fmt.Errorf("claimcheck: describe schedule %s: %w", s.GetScheduleId(), err)
			}
			if err := scan(d); err != nil {
				return nil, err
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	return live, nil
}

func historyRefs(ctx context.Context, svc workflowservice.WorkflowServiceClient, namespace string, ex *commonpb.WorkflowExecution, scan func(proto.Message) error) error {
	var token []byte
	for {
		resp, err := svc.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{Namespace: namespace, Execution: ex, NextPageToken: token})
		if err != nil {
			return fmt.Errorf("claimcheck: history of %s: %w", ex.GetWorkflowId(), err)
		}
		if err := scan(resp); err != nil {
			return err
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}
