package claimcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/textutil"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Defaults of [Options].
const (
	// DefaultThreshold is the payload size above which large strings go to
	// the store (Temporal warns at 512 KB per payload and refuses 2 MB).
	DefaultThreshold = 64 << 10
	// DefaultMinString is the length from which a string of a payload over
	// the threshold goes to the store.
	DefaultMinString = 1 << 10
)

// RefPrefix starts every reference: a payload's string
// "gantry-blob:sha256:<64 hex digits>" stands for the blob's content.
const RefPrefix = "gantry-blob:sha256:"

// Payload encodings the codec writes (the metadata "encoding").
const (
	// EncodingStrings is a JSON payload whose large string literals are
	// references to their raw bytes; the original encoding is in metadata
	// "gantry-encoding".
	EncodingStrings = "json/gantry-blob-refs"
	// EncodingPayload is a payload whose data is one reference to the
	// whole original payload (proto-encoded after [payloadMagic]).
	EncodingPayload = "binary/gantry-claim-check"

	metaEncoding = "encoding"
	metaOriginal = "gantry-encoding"
	encodingJSON = "json/plain"
	refLen       = len(RefPrefix) + 2*len(Sum{})
	payloadMagic = "gantry-payload\n"
)

// Options configure a [Codec]; the zero value of each field is its default.
type Options struct {
	// Threshold is the encoded size (bytes) above which a payload's large
	// strings go to the store (0 = DefaultThreshold; negative = never:
	// the codec then only decodes).
	Threshold int
	// MinString is the length (bytes) from which a string of such a
	// payload goes to the store (0 = DefaultMinString).
	MinString int
}

// Codec is a Temporal [converter.PayloadCodec] that keeps large payloads in
// a [Store]. A payload up to the threshold is left as it is. Above it, a
// JSON payload (Temporal's default encoding for Go values) has each string
// literal of at least MinString bytes (as encoded, between its quotes)
// replaced by a reference to a blob holding those bytes — so the same tool
// output or file content in every later model request of a run is stored
// once — and if that is still over the threshold, or the payload is not
// JSON, the whole payload becomes one blob. Decoding splices the verified
// blobs back, giving the original payload byte for byte; a missing or
// corrupt blob is an error naming the hash, never an empty value. A string
// literal that itself starts with [RefPrefix] is always stored as a blob,
// so a reference never collides with data.
//
// The interface has no context: store calls use context.Background.
type Codec struct {
	store Store
	opts  Options
}

var _ converter.PayloadCodec = (*Codec)(nil)

// NewCodec returns a codec over s.
func NewCodec(s Store, opts Options) *Codec {
	if opts.Threshold == 0 {
		opts.Threshold = DefaultThreshold
	}
	if opts.MinString <= 0 {
		opts.MinString = DefaultMinString
	}
	return &Codec{store: s, opts: opts}
}

// DataConverter returns Temporal's default data converter with the codec:
// give it to client.Options.DataConverter of every client and worker of
// the runs.
func DataConverter(s Store, opts Options) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), NewCodec(s, opts))
}

// Encode implements [converter.PayloadCodec].
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		q, err := c.encode(context.Background(), p)
		if err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}

// Decode implements [converter.PayloadCodec].
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		q, err := c.decode(context.Background(), p, 0)
		if err != nil {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}

// pending is a blob to put once the encoding is decided.
type pending struct {
	sum  Sum
	data []byte
}

func (c *Codec) encode(ctx context.Context, p *commonpb.Payload) (*commonpb.Payload, error) {
	if c.opts.Threshold < 0 || proto.Size(p) <= c.opts.Threshold {
		return p, nil
	}
	enc := string(p.GetMetadata()[metaEncoding])
	if enc == encodingJSON {
		q, blobs, ok := c.offloadStrings(p)
		if ok {
			if err := c.putAll(ctx, blobs); err != nil {
				return nil, err
			}
			if proto.Size(q) <= c.opts.Threshold {
				return q, nil
			}
			// Still too large (many strings under MinString): the
			// rewritten payload, references and all, becomes one blob.
			p = q
		}
	}
	return c.offloadPayload(ctx, p)
}

// offloadStrings rewrites a JSON payload with its large string literals
// replaced by references; ok is false when the payload is not JSON or has
// no such string. A blob holds the literal's raw bytes (as encoded, between
// the quotes), so decoding puts back exactly the payload's bytes.
func (c *Codec) offloadStrings(p *commonpb.Payload) (*commonpb.Payload, []pending, bool) {
	var out []byte
	var blobs []pending
	last := 0
	err := scanStrings(p.Data, func(start, end int) {
		raw := p.Data[start:end]
		if end-start < c.opts.MinString && !bytes.HasPrefix(raw, []byte(RefPrefix)) {
			return
		}
		sum := SumOf(raw)
		blobs = append(blobs, pending{sum, raw})
		out = append(append(append(out, p.Data[last:start]...), RefPrefix...), sum.String()...)
		last = end
	})
	if err != nil || len(blobs) == 0 {
		return nil, nil, false
	}
	out = append(out, p.Data[last:]...)
	md := make(map[string][]byte, len(p.Metadata)+1)
	for k, v := range p.Metadata {
		md[k] = v
	}
	md[metaOriginal] = p.Metadata[metaEncoding]
	md[metaEncoding] = []byte(EncodingStrings)
	return &commonpb.Payload{Metadata: md, Data: out}, blobs, true
}

// scanStrings calls f with the bounds of the content (between the quotes)
// of every string literal of the JSON text data, in order: outside string
// literals JSON has no quote. It fails on an unterminated literal.
func scanStrings(data []byte, f func(start, end int)) error {
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(data) && data[j] != '"' {
			if data[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(data) {
			return errors.New("claimcheck: unterminated string in a JSON payload")
		}
		f(i+1, j)
		i = j
	}
	return nil
}

func (c *Codec) offloadPayload(ctx context.Context, p *commonpb.Payload) (*commonpb.Payload, error) {
	b, err := proto.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("claimcheck: %w", err)
	}
	data := append([]byte(payloadMagic), b...)
	sum := SumOf(data)
	if err := c.putAll(ctx, []pending{{sum, data}}); err != nil {
		return nil, err
	}
	return &commonpb.Payload{
		Metadata: map[string][]byte{metaEncoding: []byte(EncodingPayload)},
		Data:     []byte(RefPrefix + sum.String()),
	}, nil
}

func (c *Codec) putAll(ctx context.Context, blobs []pending) error {
	seen := make(map[Sum]bool, len(blobs))
	for _, b := range blobs {
		if seen[b.sum] {
			continue
		}
		seen[b.sum] = true
		if err := c.store.Put(ctx, b.sum, b.data); err != nil {
			return fmt.Errorf("claimcheck: store a %d-byte blob: %w", len(b.data), err)
		}
	}
	return nil
}

func (c *Codec) decode(ctx context.Context, p *commonpb.Payload, depth int) (*commonpb.Payload, error) {
	switch string(p.GetMetadata()[metaEncoding]) {
	case EncodingPayload:
		if depth > 0 {
			return nil, errors.New("claimcheck: a payload blob refers to another payload blob")
		}
		sum, err := parseRef(string(p.Data))
		if err != nil {
			return nil, err
		}
		b, err := Load(ctx, c.store, sum)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, []byte(payloadMagic)) {
			return nil, fmt.Errorf("claimcheck: blob sha256:%s is not a payload", sum)
		}
		var q commonpb.Payload
		if err := proto.Unmarshal(b[len(payloadMagic):], &q); err != nil {
			return nil, fmt.Errorf("claimcheck: blob sha256:%s: %w", sum, err)
		}
		return c.decode(ctx, &q, depth+1)
	case EncodingStrings:
		var out []byte
		var failed error
		last := 0
		err := scanStrings(p.Data, func(start, end int) {
			raw := p.Data[start:end]
			if failed != nil || !bytes.HasPrefix(raw, []byte(RefPrefix)) {
				return
			}
			sum, err := parseRef(string(raw))
			if err != nil {
				failed = err
				return
			}
			b, err := Load(ctx, c.store, sum)
			if err != nil {
				failed = err
				return
			}
			out = append(append(out, p.Data[last:start]...), b...)
			last = end
		})
		if err == nil {
			err = failed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p.Data[last:]...)
		md := make(map[string][]byte, len(p.Metadata))
		for k, v := range p.Metadata {
			if k != metaOriginal {
				md[k] = v
			}
		}
		md[metaEncoding] = p.Metadata[metaOriginal]
		return &commonpb.Payload{Metadata: md, Data: out}, nil
	}
	return p, nil
}

func parseRef(s string) (Sum, error) {
	if len(s) != refLen || !strings.HasPrefix(s, RefPrefix) {
		return Sum{}, fmt.Errorf("claimcheck: %q is not a blob reference", textutil.Truncate(s, 100))
	}
	return ParseSum(s[len(RefPrefix):])
}
