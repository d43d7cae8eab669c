// Package memory is the in-process metadata store (store.type=memory, docs/protocol.md §8.4):
// a map guarded by a mutex, revision 1 on Create and +1 per Commit, lost on
// restart. It is not shared with other coordinator processes.
//
// Documents are copied on the way in and on the way out, so callers may keep
// and modify the byte slices they pass or receive.
package memory
