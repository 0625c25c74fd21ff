package llm

import (
	"context"
	"errors"
)

// ModelInfo is one model a provider serves.
type ModelInfo struct {
	// ID is the name requests give as the model.
	ID string
	// DisplayName is the provider's name for people ("" when it has none).
	DisplayName string
}

// ModelLister is an optional interface of a [Provider] that can list the
// models its API serves (Anthropic's and OpenAI's GET /v1/models).
type ModelLister interface {
	// ListModels returns the models in the order the API gives them.
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

// ErrNoModelList is returned by [ListModels] for a provider that is not a
// [ModelLister].
var ErrNoModelList = errors.New("llm: the provider does not list its models")

// MaxListedModels bounds how many models a [ModelLister] of this module
// returns (a list is paged through until it ends or reaches the bound).
const MaxListedModels = 1000

// ListModels returns p's models if p is a [ModelLister], else
// [ErrNoModelList].
func ListModels(ctx context.Context, p Provider) ([]ModelInfo, error) {
	if l, ok := p.(ModelLister); ok {
		return l.ListModels(ctx)
	}
	return nil, ErrNoModelList
}
