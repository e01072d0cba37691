package main

import (
	"context"
	"runtime"
	"slices"
	"time"
)

// measurement is one round of one workload: a figure (µs per op, events/s,
// ...) or an error.
type measurement func() (float64, error)

// interleave runs every measurement rounds times, taking turns (a, b, c,
// a, b, c, ...) so that a burst of load from elsewhere on the machine
// falls on all of them alike, and returns the median of each one's
// rounds, in the order given.
func interleave(ctx context.Context, rounds int, ms ...measurement) ([]float64, error) {
	got := make([][]float64, len(ms))
	for range rounds {
		for i, m := range ms {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			x, err := m()
			if err != nil {
				return nil, err
			}
			got[i] = append(got[i], x)
		}
	}
	out := make([]float64, len(ms))
	for i, xs := range got {
		out[i] = median(xs)
	}
	return out, nil
}

// interleaveEach is interleave for measurements that may fail on their
// own (a flowctl command that an older binary refuses): a measurement that
// fails is dropped from the later rounds, its error kept at its index,
// and the others go on. Only the context's end fails the whole.
func interleaveEach(ctx context.Context, rounds int, ms ...measurement) ([]float64, []error, error) {
	got := make([][]float64, len(ms))
	errs := make([]error, len(ms))
	for range rounds {
		for i, m := range ms {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if errs[i] != nil {
				continue
			}
			x, err := m()
			if err != nil {
				errs[i] = err
				continue
			}
			got[i] = append(got[i], x)
		}
	}
	out := make([]float64, len(ms))
	for i, xs := range got {
		if errs[i] == nil {
			out[i] = median(xs)
		}
	}
	return out, errs, nil
}

// median returns the middle of xs (the mean of the two middles for an
// even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// timed runs f n times (with 0..n-1) and returns the total time.
func timed(n int, f func(i int) error) (time.Duration, error) {
	start := time.Now()
	for i := range n {
		if err := f(i); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// perOp measures f as the mean time of n calls, in units of unit
// (time.Microsecond: µs per op).
func perOp(n int, unit time.Duration, f func(i int) error) measurement {
	return func() (float64, error) {
		d, err := timed(n, f)
		return float64(d) / float64(unit) / float64(n), err
	}
}

// rate measures f, which handles events events a call, in events/s.
// settledRate is rate with a garbage collection before each run, outside
// its time: each run then starts from the heap a fresh process starts
// from, as a rebuild does. A replay allocates about as much as it keeps
// (a state of ~130 MB on the 1M file), so without it a run inherits the
// heap goal the run before it left: a run that follows a large live
// heap collects twice, one after a collection near its start collects
// seven or eight times, twice the marking, and two rates taken in turns
// (replay_parallel's) swing by which of them drew which.
func settledRate(events int, f func() error) measurement {
	timed := rate(events, f)
	return func() (float64, error) {
		runtime.GC()
		return timed()
	}
}

func rate(events int, f func() error) measurement {
	return func() (float64, error) {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		return float64(events) / time.Since(start).Seconds(), nil
	}
}
