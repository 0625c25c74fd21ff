// Package deps pins the project's dependencies while the packages that use
// them are being written. Temporary: removed once every dependency is imported
// by real code.
package deps

import (
	_ "github.com/JohannesKaufmann/html-to-markdown/v2"
	_ "github.com/adhocore/gronx"
	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/go-git/go-git/v5/plumbing/format/gitignore"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/uuid"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/trace"
	_ "go.uber.org/goleak"
	_ "modernc.org/sqlite"
	_ "mvdan.cc/sh/v3/syntax"
)
