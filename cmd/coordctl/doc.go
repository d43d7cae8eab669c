// Command coordctl manages consumer groups of a Redis Stream Coordinator
// from the shell, in the style of kubectl and kafka-consumer-groups: log in
// once, then list, describe, create, delete and scale groups, roll back a
// migration, reset a group's offsets, list members and dead letters,
// redrive or delete dead letters, and show the coordinator cluster.
//
//	coordctl login --server http://127.0.0.1:8080 --username admin   # password from stdin or COORDCTL_PASSWORD
//	coordctl groups list
//	coordctl groups describe orders billing
//	coordctl reset-offsets orders billing --to latest --shards 0,1
//	coordctl dead-letters orders billing redrive 1718000000000-0
//
// login keeps the server URL and the Bearer token in
// $XDG_CONFIG_HOME/coordctl/config.json (os.UserConfigDir), mode 0600.
// Output is a table by default, JSON with -o json. Exit codes (stable, for
// scripts): 0 success; 1 failure (network, server error, a dead letter that
// failed); 2 usage; 3 not logged in, 401 or 403; 4 not found (404); 5
// conflict or refused (409, 422); 6 unavailable or throttled (503, 429).
package main
