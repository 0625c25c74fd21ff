package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestSubcommandNames: the name a subcommand is listed under is the name
// cobra matches, and it has no aliases (which the lazy tree would not see).
func TestSubcommandNames(t *testing.T) {
	a, _, _ := testApp(t)
	for _, sub := range subcommands {
		c := sub.new(a)
		if c.Name() != sub.name {
			t.Errorf("subcommand listed as %q is named %q", sub.name, c.Name())
		}
		if len(c.Aliases) > 0 {
			t.Errorf("%s has aliases %v: neededSubcommands matches names only", sub.name, c.Aliases)
		}
	}
}

// TestLazySubcommands: a command line builds the subcommands it names, all
// of them for help and completion, and cobra resolves it to the same
// command as with the whole tree.
func TestLazySubcommands(t *testing.T) {
	names := func(root *cobra.Command) []string {
		var out []string
		for _, c := range root.Commands() {
			out = append(out, c.Name())
		}
		return out
	}
	a, _, _ := testApp(t)
	all := names(newRootCmd(a))
	if len(all) != len(subcommands) {
		t.Fatalf("the whole tree has %d subcommands, %d listed", len(all), len(subcommands))
	}
	for _, tc := range []struct {
		args []string
		want []string // nil: all
	}{
		{[]string{"--version"}, []string{}},
		{[]string{"-p", "hi"}, []string{}},
		{[]string{"-p", "fix the tools"}, []string{}},
		{[]string{}, []string{}},
		{[]string{"tools", "call", "Grep", `{"pattern":"x"}`}, []string{"tools"}},
		{[]string{"--model", "m", "mcp", "list"}, []string{"mcp"}},
		{[]string{"-p", "run"}, []string{"run"}}, // cobra takes "run" for the subcommand, as it always did
		{[]string{"--help"}, nil},
		{[]string{"-h"}, nil},
		{[]string{"tools", "-h"}, nil},
		{[]string{"help", "tools"}, nil},
		{[]string{"completion", "bash"}, nil},
		{[]string{"__complete", "to"}, nil},
		{nil, nil},
	} {
		a, _, _ := testApp(t)
		root := newRootCmdFor(a, tc.args)
		got := names(root)
		want := tc.want
		if want == nil {
			want = all
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%q builds %v, want %v", tc.args, got, want)
		}
		if tc.args == nil {
			continue
		}
		full, _, ferr := newRootCmd(a).Find(tc.args)
		lazy, _, lerr := root.Find(tc.args)
		if (ferr == nil) != (lerr == nil) || full.CommandPath() != lazy.CommandPath() {
			t.Errorf("%q: the whole tree finds %q (%v), the lazy one %q (%v)", tc.args, full.CommandPath(), ferr, lazy.CommandPath(), lerr)
		}
	}
}

// TestLazyHelp: help lists every subcommand, and --version prints the
// version without building any.
func TestLazyHelp(t *testing.T) {
	a, out, _ := testApp(t)
	if code := run(context.Background(), a, []string{"--help"}); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, sub := range subcommands {
		if !strings.Contains(out.String(), "\n  "+sub.name+" ") {
			t.Errorf("--help does not list %s:\n%s", sub.name, out.String())
		}
	}
	a, out, _ = testApp(t)
	if code := run(context.Background(), a, []string{"--version"}); code != 0 || !strings.HasPrefix(out.String(), "gantry version ") {
		t.Fatalf("--version: exit %d, %q", code, out.String())
	}
}
