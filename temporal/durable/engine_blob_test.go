package durable

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/temporal/claimcheck"
)

// TestRecordMemoBlob: a run's request memo over the threshold is read
// through the claim-check store; with the blob gone the record says so
// instead of showing an empty request.
func TestRecordMemoBlob(t *testing.T) {
	d, err := claimcheck.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dc := claimcheck.DataConverter(d, claimcheck.Options{Threshold: 1024})
	req := runqueue.Request{Prompt: strings.Repeat("fix it ", 1000), Dir: "/w"}
	b, _ := json.Marshal(req)
	memo, err := dc.ToPayload(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(memo.Metadata["encoding"]) != claimcheck.EncodingStrings {
		t.Fatalf("the memo was not offloaded: %s", memo.Metadata["encoding"])
	}
	info := &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: "r1"}, Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		StartTime: timestamppb.Now(), Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{memoRequest: memo}},
	}
	run := record(info, dc)
	if run.Request.Prompt != req.Prompt || run.Error != "" {
		t.Fatalf("record = %+v", run)
	}
	for info := range d.Blobs(context.Background()) {
		d.Delete(context.Background(), info.Sum)
	}
	if run := record(info, dc); !strings.Contains(run.Error, "blob not found") {
		t.Errorf("record with the blob gone: error %q", run.Error)
	}
}
