package flow

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary act as a second process: with
// FLOW_TEST_CHILD set, it runs that child action instead of the tests.
func TestMain(m *testing.M) {
	if action := os.Getenv("FLOW_TEST_CHILD"); action != "" {
		if err := runChild(action); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs one action against the file in FLOW_TEST_DB.
func runChild(action string) error {
	e, err := Open(os.Getenv("FLOW_TEST_DB"), Options{Actor: "child", LockTimeout: 10e9})
	if err != nil {
		return err
	}
	defer e.Close()
	switch action {
	case "retitle":
		title := os.Getenv("FLOW_TEST_TITLE")
		_, err = e.EditTask(TaskEdit{Project: "p", ID: "T-1", Title: &title})
	case "start":
		_, err = e.MoveTask(Move{Project: "p", ID: "T-1", To: "doing"})
	default:
		err = fmt.Errorf("unknown child action %q", action)
	}
	return err
}
