// Package agent runs the agent loop: it sends the conversation and the tool
// pool to a model, hands the tool calls of each reply to the streaming
// executor as they complete, returns the results in the model's order, and
// repeats until the model stops, a limit is hit or the context is cancelled.
package agent
