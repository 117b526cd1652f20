//go:build !noinstall

package main

import "github.com/spf13/cobra"

// runtimeCmds are install, uninstall and identity, which carry the Helm SDK
// (identity reads the runtime's signing key through the provisioner). A build
// with -tags noinstall (the controller image's) leaves them out.
func runtimeCmds(o *options) []*cobra.Command {
	return []*cobra.Command{newInstallCmd(o), newUninstallCmd(o), newIdentityCmd(o)}
}
