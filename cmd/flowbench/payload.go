package main

import (
	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/internal/workload"
)

// syntheticEvent is one event of the storage workloads (workload.Payload).
func syntheticEvent() eventlog.Event {
	return eventlog.Event{Type: workload.StorageType, Schema: workload.StorageSchema, Actor: workload.StorageActor,
		Session: workload.StorageSession, Project: workload.StorageProject, Data: workload.Payload()}
}
