package audit

import "github.com/redis-stream-coordinator/coordinator/contract"

// Target is an audited request's route and path parameters, as the HTTP
// layer matched them (contract.Routes names the audited routes and their
// actions).
type Target struct {
	Action contract.Action
	// Route is the template including the base path, parameters in braces
	// (contract.BasePath + contract.StreamScale), as Spring and OpenAPI
	// write it.
	Route        string
	StreamPrefix string
	// ConsumerGroup is "" for stream-level actions.
	ConsumerGroup string
	// ReshardingID is "" except for ROLLBACK_MIGRATION.
	ReshardingID string
}
