// Package llm is Gantry's provider-neutral model layer: conversation
// messages ([Message], [Block]), a request ([Request]), the stream of events
// a reply arrives as ([Event]), and the [Provider] interface the adapters in
// llm/anthropic and llm/openai implement over the official SDKs.
//
// A turn of an agent loop looks like this:
//
//	var acc llm.Accumulator
//	for ev, err := range provider.Stream(ctx, req) {
//		if err != nil {
//			return err // partial reply: discard it (the orphan rule)
//		}
//		acc.Add(ev)
//		if ev.Type == llm.EventToolUseEnd {
//			executor.Start(ev.ID, ev.Name, ev.Input) // its input is complete
//		}
//	}
//	resp := acc.Response() // the assistant message, stop reason, usage
//
// or, without streaming to anyone, resp, err := llm.Collect(provider.Stream(ctx, req)).
//
// Errors are classified for callers to branch on with [errors.Is]:
// [ErrOverloaded], [ErrRateLimited], [ErrServer], [ErrAuth],
// [ErrBadRequest], [ErrContextLength], [ErrConnection] and [ErrInterrupted];
// [*APIError] carries the status, type and the provider's message. Adapters
// retry transient failures that happen before the first event of an attempt
// with one testable policy, [RetryPolicy], which honours retry-after-ms and
// retry-after.
//
// Package llm imports only package tool from Gantry; tool results travel as
// [tool.Content] blocks.
package llm
