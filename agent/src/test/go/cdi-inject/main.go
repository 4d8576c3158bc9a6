// cdi-inject: a CDI consumer for the agent's tests, built on the CDI project's own Go library (the
// code container runtimes such as containerd and CRI-O use), as Debian packages it.
//
// Usage: cdi-inject SPEC_DIR [QUALIFIED_DEVICE...]
//
// Loads every spec in SPEC_DIR the way a runtime does (parsing, validation, version check). Any
// spec error: one line per error on stderr, exit 1. Otherwise injects the named devices into an
// empty OCI spec and prints the edited spec as JSON on stdout (exit 1 if a device is unresolvable).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/container-orchestrated-devices/container-device-interface/pkg/cdi"
	oci "github.com/opencontainers/runtime-spec/specs-go"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cdi-inject SPEC_DIR [QUALIFIED_DEVICE...]")
		os.Exit(2)
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(os.Args[1]), cdi.WithAutoRefresh(false))
	failed := false
	if err != nil {
		fmt.Fprintln(os.Stderr, "cache:", err)
		failed = true
	}
	if cache != nil {
		errs := cache.GetErrors()
		paths := make([]string, 0, len(errs))
		for path := range errs {
			paths = append(paths, path)
		}
		sort.Strings(paths)
		for _, path := range paths {
			for _, e := range errs[path] {
				fmt.Fprintf(os.Stderr, "%s: %v\n", path, e)
				failed = true
			}
		}
	}
	if failed {
		os.Exit(1)
	}
	spec := &oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}
	if unresolved, err := cache.InjectDevices(spec, os.Args[2:]...); err != nil {
		fmt.Fprintln(os.Stderr, "inject:", err, unresolved)
		os.Exit(1)
	}
	out := map[string]interface{}{
		"devices": cache.ListDevices(),
		"spec":    spec,
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "encode:", err)
		os.Exit(1)
	}
}
