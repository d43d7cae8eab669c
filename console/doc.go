// Package console is the coordinator's web console: a single-page app of
// plain HTML, CSS and JavaScript modules, embedded in the binary and served
// by the HTTP API at /console/ (open, docs/protocol.md §1: the files need no
// credentials; every API call the page makes carries the Bearer token it
// got from POST <base>/auth/login).
//
// The app uses the public API only (docs/protocol.md §2) and polls it about
// every 1.5 s. Its pages are hash routes:
//
//   - #/login: username and password → POST <base>/auth/login; the token
//     is kept in sessionStorage, never in a URL;
//   - #/groups: GET <base>/monitoring/groups with the lag of the Grafana
//     group rows, led by each group's consumption status (a coloured
//     badge that names it) with the count of groups per status, the paused
//     shards and desiredMembers, searched and sorted (status, lag, name) in
//     the page; a create form and a delete with confirmation;
//   - #/group/{P}/{G}: the group's consumption status and each shard's with
//     since when and its evidence (GET …/status; a 503 without Redis is
//     stated), the paused shards (GET …/paused-shards at every refresh);
//     the throughput from /offsets (produced and consumed per second,
//     total lag, lag as time, pending, memory) with the total lag of the
//     last minutes, sampled by the page at each refresh and kept in the
//     tab while it is open (the coordinator keeps no lag history);
//     members with lease countdown and capacity (a member whose lease ended
//     is shown ended, never as a current reader), the target and current
//     assignment as a shards × members grid led by each shard's status, the
//     assignment history (GET …/history) as a timeline of moves newest
//     first with their cause, filtered by shard, the shard positions with the
//     offset reset, revoke progress, invariant violations, migrations with
//     scale and rollback, and the recent audit events (recentMutations of
//     #16);
//   - #/dead-letters/{P}/{G}: the newest 100 dead letters grouped by last
//     error and paged 20 at a time, selected one by one, by page or by
//     error, redriven or deleted;
//   - #/messages/{P}/{G}/{i}: one shard's entries, page by page, from
//     either end or from an entry id or a time sought (time t is the id
//     "<t ms>-0"), the payload apart from the other fields.
//   - #/cluster: GET <base>/cluster: the live coordinators, every group's
//     owner, ownership epoch and placement, and recent handovers (a
//     coordinator without a cluster answers 404, which the page states).
//
// The console has no build step and loads nothing from the network but
// the coordinator itself.
package console
