// Package claimcheck keeps large payloads out of Temporal's histories: a
// [Codec] (a Temporal PayloadCodec) moves the large strings of a payload —
// tool outputs, file contents, model messages — into a content-addressed
// blob [Store] and leaves only references ("gantry-blob:sha256:<hex>") in
// the history; decoding puts them back, verified against their hash.
//
// A Store is two methods, Put and Get by SHA-256. [Dir] is the filesystem
// implementation (one directory shared by the workers of a machine, or a
// shared mount); any other store (S3, GCS, a database) plugs in by
// implementing [Store], and optionally [Sweeper] for [Prune].
//
// Every process that reads or writes the runs' payloads — workers, the
// HTTP API, clients following a run — must use the same store: a reference
// whose blob is missing or does not match its hash is an error, never an
// empty value.
package claimcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"time"
)

// Sum is the SHA-256 of a blob's content: its address in a [Store].
type Sum [sha256.Size]byte

// SumOf returns the address of data.
func SumOf(data []byte) Sum { return sha256.Sum256(data) }

// String returns the sum in lower-case hex.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// ParseSum parses a sum written by [Sum.String].
func ParseSum(s string) (Sum, error) {
	var sum Sum
	if len(s) != 2*len(sum) {
		return sum, fmt.Errorf("claimcheck: %q is not a SHA-256 in hex", s)
	}
	if _, err := hex.Decode(sum[:], []byte(s)); err != nil {
		return sum, fmt.Errorf("claimcheck: %q is not a SHA-256 in hex", s)
	}
	return sum, nil
}

// Errors of [Load] (and of a Store's Get, for ErrNotFound).
var (
	// ErrNotFound is returned for a sum that is not in the store.
	ErrNotFound = errors.New("claimcheck: blob not found")
	// ErrCorrupt is returned when the stored content does not hash to
	// its sum.
	ErrCorrupt = errors.New("claimcheck: blob content does not match its hash")
)

// Store keeps blobs by the SHA-256 of their content. Implementations must
// be safe for concurrent use by several processes sharing the store.
type Store interface {
	// Put stores data under sum, which the caller computed as
	// SumOf(data). Putting a sum already present succeeds without
	// writing (the content is the same). When Put returns nil the blob
	// is durable: a Get from any process sharing the store finds it.
	// A write is atomic: a reader never sees a partial blob.
	Put(ctx context.Context, sum Sum, data []byte) error
	// Get returns the content stored under sum, or an error wrapping
	// ErrNotFound. Get need not verify the content; [Load] does.
	Get(ctx context.Context, sum Sum) ([]byte, error)
}

// BlobInfo describes one stored blob for [Sweeper].
type BlobInfo struct {
	Sum  Sum
	Size int64
	// Used is when the blob was last written or put again (a Put of a
	// present blob refreshes it).
	Used time.Time
}

// Sweeper is implemented by stores that [Prune] can clean: they list
// their blobs and delete one.
type Sweeper interface {
	Blobs(ctx context.Context) iter.Seq2[BlobInfo, error]
	Delete(ctx context.Context, sum Sum) error
}

// Load returns the blob sum from s, verified: content that does not hash
// to sum is an error wrapping ErrCorrupt, a missing blob one wrapping
// ErrNotFound.
func Load(ctx context.Context, s Store, sum Sum) ([]byte, error) {
	b, err := s.Get(ctx, sum)
	if err != nil {
		return nil, fmt.Errorf("claimcheck: blob sha256:%s: %w", sum, err)
	}
	if SumOf(b) != sum {
		return nil, fmt.Errorf("claimcheck: blob sha256:%s (%d bytes): %w", sum, len(b), ErrCorrupt)
	}
	return b, nil
}
