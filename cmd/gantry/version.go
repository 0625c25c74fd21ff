package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion is the version of this binary: -ldflags "-X main.version=…"
// wins; else the module version `go install …@vX` stamped into the build
// info; else the VCS revision of a build from a checkout ("dev-<12 hex>",
// "+dirty" with uncommitted changes); else "dev".
func buildVersion() string {
	if version != "dev" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	return versionFrom(bi)
}

// versionFrom is buildVersion's rule over given build information.
func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev-" + rev
	if dirty {
		v += "+dirty"
	}
	return v
}

// newVersionCmd is `gantry version`: the version and where it came from.
func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.stdout, "gantry %s\n", buildVersion())
			if bi, ok := debug.ReadBuildInfo(); ok {
				fmt.Fprintf(a.stdout, "module %s %s\n", bi.Main.Path, bi.Main.Version)
				for _, s := range bi.Settings {
					switch s.Key {
					case "vcs.revision", "vcs.time", "vcs.modified":
						fmt.Fprintf(a.stdout, "%s %s\n", s.Key, s.Value)
					}
				}
			}
			fmt.Fprintf(a.stdout, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
