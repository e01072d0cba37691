package store

import "context"

// Notifier is a Driver whose stores tell followers that commits landed:
// a wake-up only, never the records, which the follower then reads by
// seq from where it stopped. A follower listens before it catches up, so
// that a commit ending between its read and its wait still wakes it.
// A driver without it is polled.
type Notifier interface {
	// Listen starts listening for the commits to the store dsn names and
	// returns once it listens: every commit that ends after Listen
	// returns wakes Wait, unless the notification is lost (a dropped
	// connection), which the follower's poll fallback covers. Errors
	// never hold the password of dsn.
	Listen(dsn string, o Options) (Listener, error)
}

// Listener is one Notifier's listening connection. It is not safe for
// concurrent use.
type Listener interface {
	// Wait returns nil once a commit may have moved the head past after:
	// a notification of a head beyond after, or one whose head is unknown,
	// or a connection made again (what was notified meanwhile is lost).
	// It may return nil without a new record; it returns ctx.Err() when
	// ctx ends first. A listener that cannot reach its server waits for
	// ctx and tries again at the next Wait.
	Wait(ctx context.Context, after uint64) error
	// Close stops listening.
	Close() error
}
