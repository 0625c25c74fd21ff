package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RetryPolicy says how adapters retry a request that failed transiently
// (see [Retryable]). A request is retried only while its attempt has yielded
// no event; once the caller has seen part of a reply, a failure is reported
// as [ErrInterrupted] and the caller decides.
//
// The delay before retry n (n = 1, 2, …) is the provider's retry-after-ms or
// retry-after if it sent one, else BaseDelay·2^(n-1) capped at MaxDelay,
// with "equal jitter" (a random point in the upper half of the interval) so
// that clients hit by the same outage do not retry in lockstep.
//
// The zero value is the default policy.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included. Zero means
	// 4; 1 disables retries.
	MaxAttempts int
	// BaseDelay is the first backoff delay. Zero means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps the backoff delay. Zero means 30s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest retry-after the policy waits for; a
	// provider asking for longer gets its error returned at once. Zero
	// means 60s.
	MaxRetryAfter time.Duration
	// Sleep waits for d or until ctx is done. Nil means a timer. Tests
	// inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1). Nil means math/rand/v2.
	Jitter func() float64
	// OnRetry, if set, is told about each retry before its delay (for a
	// status line: "overloaded, retrying in 2s").
	OnRetry func(attempt int, delay time.Duration, err error)
	// IdleTimeout is the longest an attempt may go without hearing from the
	// provider — response headers, content, keep-alive pings (adapters
	// report raw stream events with [Touch]) — while the caller is not busy
	// with an event it was given. Past it the attempt is abandoned: retried
	// like a dropped connection if it had yielded nothing yet, else
	// reported as [ErrInterrupted] wrapping [ErrIdleTimeout]. Zero means
	// [DefaultIdleTimeout]; a negative value disables the watchdog.
	IdleTimeout time.Duration
	// StallRetries caps the retries of attempts abandoned by the idle
	// timeout, whatever MaxAttempts says: a provider that stalls twice in a
	// row is reported instead of waited for again. Zero means 1; a
	// negative value retries no stall.
	StallRetries int
}

// DefaultIdleTimeout is the default [RetryPolicy.IdleTimeout]: 60 seconds,
// well above the providers' keep-alive ping interval (a ping counts) and
// the time to the response headers. With one stall retry a stalled
// request is reported after about two minutes.
const DefaultIdleTimeout = 60 * time.Second

// ErrIdleTimeout is wrapped by the error of an attempt abandoned because the
// provider sent nothing for [RetryPolicy.IdleTimeout].
var ErrIdleTimeout = errors.New("the model stream sent nothing for too long")

func (p RetryPolicy) idleTimeout() time.Duration {
	if p.IdleTimeout == 0 {
		return DefaultIdleTimeout
	}
	return p.IdleTimeout
}

// watchdog cancels an attempt that hears nothing for d. It is paused while
// the caller handles an event.
type watchdog struct {
	mu     sync.Mutex
	d      time.Duration
	t      *time.Timer
	paused bool
	fired  bool
}

type watchdogKey struct{}

func newWatchdog(d time.Duration, fire func()) *watchdog {
	w := &watchdog{d: d}
	w.t = time.AfterFunc(d, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		fire()
	})
	return w
}

func (w *watchdog) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.paused && !w.fired {
		w.t.Reset(w.d)
	}
}

func (w *watchdog) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = true
	w.t.Stop()
}

func (w *watchdog) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = false
	if !w.fired {
		w.t.Reset(w.d)
	}
}

func (w *watchdog) stop() {
	if w != nil {
		w.t.Stop()
	}
}

// Touch tells the idle watchdog of the attempt running under ctx (see
// [RetryPolicy.IdleTimeout]) that the provider sent something. Adapters
// call it for every raw stream event, keep-alives included; it does nothing
// without a watchdog.
func Touch(ctx context.Context) {
	if w, ok := ctx.Value(watchdogKey{}).(*watchdog); ok {
		w.touch()
	}
}

func (p RetryPolicy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return 4
	}
	return p.MaxAttempts
}

// Delay returns the wait before retry n (1-based) after err.
func (p RetryPolicy) Delay(n int, err error) time.Duration {
	if ra := RetryAfter(err); ra > 0 {
		return ra
	}
	base, maxd := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 30 * time.Second
	}
	d := base
	for i := 1; i < n && d < maxd; i++ {
		d *= 2
	}
	d = min(d, maxd)
	j := p.Jitter
	if j == nil {
		j = rand.Float64
	}
	half := d / 2
	return half + time.Duration(j()*float64(d-half))
}

func (p RetryPolicy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retry runs attempt until it succeeds, fails permanently, or the policy's
// attempts run out, and yields the events of the attempt that got through.
// Adapters build their [Provider.Stream] with it; attempt must return
// classified errors ([APIError], [ErrConnection], …).
func Retry(ctx context.Context, p RetryPolicy, attempt func(ctx context.Context) iter.Seq2[Event, error]) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		maxAttempts := p.maxAttempts()
		maxRA := p.MaxRetryAfter
		if maxRA <= 0 {
			maxRA = 60 * time.Second
		}
		idle := p.idleTimeout()
		stallRetries := p.StallRetries
		if stallRetries == 0 {
			stallRetries = 1
		}
		stalls := 0
	attempts:
		for n := 1; ; n++ {
			actx, cancel := context.WithCancelCause(ctx)
			var wd *watchdog
			if idle > 0 {
				wd = newWatchdog(idle, func() { cancel(ErrIdleTimeout) })
				actx = context.WithValue(actx, watchdogKey{}, wd)
			}
			yielded := false
			for ev, err := range attempt(actx) {
				if err == nil {
					yielded = true
					if wd != nil {
						wd.pause()
					}
					ok := yield(ev, nil)
					if wd != nil {
						wd.resume()
					}
					if !ok {
						wd.stop()
						cancel(nil)
						return
					}
					continue
				}
				wd.stop()
				timedOut := ctx.Err() == nil && errors.Is(context.Cause(actx), ErrIdleTimeout)
				cancel(nil)
				switch {
				case timedOut && yielded:
					err = fmt.Errorf("%w: %w (nothing from the provider for %v)", ErrInterrupted, ErrIdleTimeout, idle)
				case timedOut:
					err = fmt.Errorf("%w: %w (nothing from the provider for %v)", ErrConnection, ErrIdleTimeout, idle)
					stalls++
					if stalls > stallRetries {
						err = fmt.Errorf("%w; giving up after %d stalled attempts", err, stalls)
						yield(Event{}, err)
						return
					}
				}
				if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
					err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
				}
				if yielded || n >= maxAttempts || !Retryable(err) || ctx.Err() != nil ||
					RetryAfter(err) > maxRA {
					yield(Event{}, err)
					return
				}
				d := p.Delay(n, err)
				if p.OnRetry != nil {
					p.OnRetry(n, d, err)
				}
				if serr := p.sleep(ctx, d); serr != nil {
					yield(Event{}, fmt.Errorf("%w (while waiting to retry after: %w)", serr, err))
					return
				}
				continue attempts
			}
			wd.stop()
			cancel(nil)
			return
		}
	}
}

// ParseRetryAfter reads the delay a response asks for: retry-after-ms
// (milliseconds, fractions allowed) wins over retry-after (seconds, or an
// HTTP date relative to now). Zero means none, or a value that could not be
// parsed, or one in the past.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
