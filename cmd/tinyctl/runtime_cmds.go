//go:build !noinstall

package main

import "github.com/spf13/cobra"

// runtimeCmds are install and uninstall, which carry the Helm SDK. A build
// with -tags noinstall (the controller image's) leaves them out.
func runtimeCmds(o *options) []*cobra.Command {
	return []*cobra.Command{newInstallCmd(o), newUninstallCmd(o)}
}
