// Command conformanceserver is the fixture server of the official MCP
// conformance suite (@modelcontextprotocol/conformance) built from Gantry's
// parts: the suite's fixture tools (test_simple_text, test_tool_with_progress,
// test_sampling, ...) are Gantry tools written with the tool package, served
// by mcpserve through a real executor pipeline (validation, hooks seam,
// permission decision, deadlines, result budget), together with the suite's
// fixture resources, resource templates, prompts and completion.
//
// Usage:
//
//	conformanceserver [-addr 127.0.0.1:8765]
//
// It serves streamable HTTP at /mcp on a loopback address and prints
// "listening on http://ADDR/mcp" once it accepts connections. Run the
// suite against it with
//
//	node conformance server --url http://ADDR/mcp [--scenario NAME]
//
// The Go test next to it does that for every server scenario when the npm
// peers are installed (GANTRY_PEERS_DIR).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gantry-dev/gantry/mcpserve"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "conformanceserver:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conformanceserver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := newServer(os.TempDir())
	if err != nil {
		return err
	}
	l, err := mcpserve.Listen(*addr, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on http://%s/mcp\n", l.Addr())
	return srv.ServeHTTP(ctx, l)
}
