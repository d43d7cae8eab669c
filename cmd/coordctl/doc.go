// Command coordctl manages consumer groups of a Redis Stream Coordinator
// from the shell, in the style of kubectl and kafka-consumer-groups: log in
// once, then list, describe, create (one, or many from a file), delete and
// scale groups (one group, or every group of a stream prefix), roll back a
// migration, reset a group's offsets, list members and dead letters,
// redrive or delete dead letters, and show the coordinator cluster.
//
//	coordctl login --server http://127.0.0.1:8080 --username admin   # password from stdin or COORDCTL_PASSWORD
//	coordctl groups list
//	coordctl groups describe orders billing
//	coordctl scale-stream orders --shards 8
//	coordctl create-groups -f groups.yaml
//	coordctl reset-offsets orders billing --to latest --shards 0,1
//	coordctl dead-letters orders billing redrive 1718000000000-0
//	coordctl scale --help
//
// It calls the API through package client (the Go client's Coordinator
// and its admin calls) and decodes the API's wire types. Each command is
// registered by the file that implements it (command.go: register) with
// its own flag set, usage and --help; docs/coordctl.md is the manual.
//
// login keeps the server URL and the Bearer token in
// $XDG_CONFIG_HOME/coordctl/config.json (os.UserConfigDir), mode 0600.
// Output is a table by default, JSON with -o json. Exit codes are stable
// for scripts (exit.go: exitCodesHelp).
package main
