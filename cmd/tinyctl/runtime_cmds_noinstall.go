//go:build noinstall

package main

import "github.com/spf13/cobra"

// runtimeCmds is empty in a build with -tags noinstall: no install or
// uninstall command, and no Helm SDK in the binary (about 11 MB less, see docs/install.md).
func runtimeCmds(*options) []*cobra.Command { return nil }
