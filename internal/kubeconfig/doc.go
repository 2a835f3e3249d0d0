// Package kubeconfig turns a kubeconfig read from the hub (the Secret a Cluster references)
// into a REST config, and refuses any kubeconfig that would make its reader run a program or
// read a local file: exec and auth-provider plugins, and token-file, client-certificate,
// client-key and certificate-authority paths. Whoever can write a Secret on the hub must not
// be able to run code or read files where the hub controller, `flotilla plan`, `flotilla diff`
// or `flotilla unjoin` runs. A kubeconfig stored on the hub carries its credentials inline, as
// the one `flotilla join` writes does.
//
// Every kubeconfig read from the hub goes through Parse. It is not for the user's own
// kubeconfig (internal/cli/hubconfig.go): there, plugins and files are the user's choice and
// run with the user's rights.
//
// Errors never quote the kubeconfig: a parse error keeps only a line number, and a refusal
// names the user or cluster entry and the field, never its value.
package kubeconfig
