package actors

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// observeMessages returns a receiver middleware reporting to obs how long
// a group actor handled each request, tick and flush
// (Observer.MessageHandled).
func observeMessages(obs Observer) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(ctx actor.ReceiverContext, env *actor.MessageEnvelope) {
			name := messageType(env.Message)
			if name == "" {
				next(ctx, env)
				return
			}
			start := time.Now()
			next(ctx, env)
			obs.MessageHandled(name, time.Since(start))
		}
	}
}

// answerPanics is a receiver middleware that, when handling a message
// panics, answers that message and every request parked in the group
// actor's batch with contract.ErrInternal, then re-panics so that the
// supervisor restarts the actor (protoactor drops the panicking message, so
// it must be answered here). The restarted actor reloads from the store.
func answerPanics(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(ctx actor.ReceiverContext, env *actor.MessageEnvelope) {
		defer func() {
			if r := recover(); r != nil {
				err := fmt.Errorf("%w: %v", outsideStore(contract.ErrInternal), r)
				if a, ok := ctx.Actor().(*groupActor); ok {
					a.failBatch(err)
					a.c.opts.Logger.Error("group actor panicked; restarting", "group", a.key.String(), "panic", r)
				}
				failRequest(env.Message, err)
				panic(r)
			}
		}()
		next(ctx, env)
	}
}

// messageType names a group actor's message as Observer.MessageHandled
// reports it (one of the Msg constants); it returns "" for lifecycle
// messages.
func messageType(msg any) string {
	switch msg.(type) {
	case *heartbeatMsg:
		return MsgHeartbeat
	case *createMsg:
		return MsgCreateGroup
	case *deleteMsg:
		return MsgDeleteGroup
	case *scaleMsg:
		return MsgScale
	case *checkScaleMsg:
		return MsgCheckScale
	case *rollbackMsg:
		return MsgRollback
	case *snapshotMsg:
		return MsgGetSnapshot
	case *tickMsg:
		return MsgTick
	case flush:
		return MsgFlush
	}
	return ""
}

// failRequest answers msg with err if it is a request that has not been
// answered yet (its reply channel is still empty).
func failRequest(msg any, err error) {
	switch m := msg.(type) {
	case *heartbeatMsg:
		tryFail(m.Reply, err)
	case *createMsg:
		tryFail(m.Reply, err)
	case *deleteMsg:
		tryFail(m.Reply, err)
	case *scaleMsg:
		tryFail(m.Reply, err)
	case *checkScaleMsg:
		tryFail(m.Reply, err)
	case *rollbackMsg:
		tryFail(m.Reply, err)
	case *pauseMsg:
		tryFail(m.Reply, err)
	case *resetMsg:
		tryFail(m.Reply, err)
	case *workMsg:
		tryFail(m.Reply, err)
	case *forceResetMsg:
		tryFail(m.Reply, err)
	case *snapshotMsg:
		tryFail(m.Reply, err)
	}
}

// tryFail answers r with err unless it already holds an answer.
func tryFail[T any](r replyTo[T], err error) {
	var zero T
	select {
	case r <- reply[T]{Value: zero, Err: err}:
	default:
	}
}

// warnHandler passes only warnings and errors to the wrapped handler; it
// keeps protoactor's info-level chatter out of the coordinator's logs.
type warnHandler struct{ slog.Handler }

func (h warnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnHandler{h.Handler.WithAttrs(attrs)}
}

func (h warnHandler) WithGroup(name string) slog.Handler {
	return warnHandler{h.Handler.WithGroup(name)}
}
