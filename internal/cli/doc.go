// Package cli holds what every tinyctl command shares and none of them
// should re-implement: the NATS connection flags and their TINYCTL_*
// environment variables, the `nats` CLI's context files, the kubeconfig
// flags, and the printers for human output (aligned tables, relative ages,
// colour only on a terminal, progress for slow calls) and machine output
// (-o json|yaml in a stable, documented shape).
//
// Flags are registered on a pflag.FlagSet by AddFlags methods, so a command
// picks the groups it needs. ApplyEnv fills flags the user did not set from
// their environment variables; values set either way count as explicit and
// override a NATS context.
package cli
