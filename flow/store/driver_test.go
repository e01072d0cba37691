package store

import (
	"errors"
	"strings"
	"testing"
)

func TestDriverName(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{".flow/flow.db", PathDriver},
		{"/abs/path/flow.db", PathDriver},
		{`C:\work\flow.db`, PathDriver},
		{"dir.d://x", PathDriver},
		{"postgres://user@host/db", "postgres"},
		{"Postgres://host/db", "postgres"},
		{"://x", PathDriver},
	} {
		if got := DriverName(c.dsn); got != c.want {
			t.Errorf("DriverName(%q) = %q, want %q", c.dsn, got, c.want)
		}
	}
}

type fakeDriver struct{}

func (fakeDriver) Open(string, Options) (Store, error) { return nil, ErrNotExist }

func TestLookup(t *testing.T) {
	t.Run("ErrNoDriver", func(t *testing.T) {
		_, err := Lookup("nosuch://host/db")
		if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "nosuch://") {
			t.Fatalf("Lookup = %v, want ErrNoDriver naming the scheme", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		Register("faketest", fakeDriver{})
		d, err := Lookup("faketest://x")
		if err != nil || d == nil {
			t.Fatalf("Lookup = %v, %v", d, err)
		}
		if _, err := Open("faketest://x", Options{}); !errors.Is(err, ErrNotExist) {
			t.Fatalf("Open = %v, want the driver's error", err)
		}
		found := false
		for _, n := range Drivers() {
			found = found || n == "faketest"
		}
		if !found {
			t.Errorf("Drivers() = %v, want faketest in it", Drivers())
		}
	})
}

func TestExpect(t *testing.T) {
	if !Any.Allows(7) || !Any.IsAny() || NoStream.Allows(1) || !NoStream.Allows(0) || !Exact(3).Allows(3) || Exact(3).Allows(4) {
		t.Error("Expect.Allows disagrees with Any, NoStream, Exact")
	}
	if Exact(3).Version() != 3 || Any.String() != "any" || Exact(3).String() != "3" {
		t.Error("Expect.Version or String wrong")
	}
}
