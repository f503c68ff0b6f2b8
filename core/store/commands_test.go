package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A command's record: stored with its caller, space and the protected names before it (odd
// names too: a newline, invalid UTF-8, the escape of PostgreSQL text), listed per space or
// all, forgotten by EndCommand or with its replica; records that cannot be stored are
// refused. On both drivers.
func TestCommandRecords(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, drv string) {
		d := openTest(t, drv)
		ctx := context.Background()
		odd := []string{".git", "sub/.GIT", "a\nb/.git", "\xff\xfe/.git", "x\uFDD0y/.git"}
		bob := Command{ID: "c1", Replica: "R1", Owner: Owner{"group", "team"}, UserID: "bob", Name: "Bob", Email: "bob@x",
			ConvID: "conv-1", Message: "shed_exec: tar -xzf a.tar.gz", Protected: odd, Started: time.Now().Add(-time.Minute)}
		ann := Command{ID: "c2", Replica: "R2", Owner: Owner{"user", "ann"}, UserID: "ann", ConvID: "conv-2", Message: "shed_exec: rm x"}
		for _, c := range []Command{bob, ann} {
			if err := d.StartCommand(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		got, err := d.Commands(ctx, Owner{"group", "team"})
		if err != nil || len(got) != 1 {
			t.Fatalf("team's commands: %+v, %v", got, err)
		}
		g := got[0]
		if g.ID != "c1" || g.Replica != "R1" || g.UserID != "bob" || g.Name != "Bob" || g.Email != "bob@x" || g.ConvID != "conv-1" ||
			g.Message != bob.Message || !slices.Equal(g.Protected, odd) || g.Started.Sub(bob.Started).Abs() > time.Millisecond {
			t.Fatalf("team's command: %+v", g)
		}
		if all, err := d.Commands(ctx, Owner{}); err != nil || len(all) != 2 || all[0].ID != "c1" || all[1].ID != "c2" || all[1].Protected != nil {
			t.Fatalf("every command: %+v, %v", all, err)
		}
		if err := d.EndCommand(ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		if got, err := d.Commands(ctx, Owner{"group", "team"}); err != nil || len(got) != 0 {
			t.Fatalf("after the end: %+v, %v", got, err)
		}
		if err := d.ForgetReplica(ctx, "R2"); err != nil {
			t.Fatal(err)
		}
		if all, err := d.Commands(ctx, Owner{}); err != nil || len(all) != 0 {
			t.Fatalf("after the replica was forgotten: %+v, %v", all, err)
		}
		for name, c := range map[string]Command{
			"no owner kind": {ID: "c3", Replica: "R", Owner: Owner{"nobody", "x"}, UserID: "u"},
			"no owner id":   {ID: "c3", Replica: "R", Owner: Owner{"user", ""}, UserID: "u"},
			"no id":         {Replica: "R", Owner: Owner{"user", "u"}, UserID: "u"},
			"no user":       {ID: "c3", Replica: "R", Owner: Owner{"user", "u"}},
		} {
			if err := d.StartCommand(ctx, c); err == nil {
				t.Errorf("%s: recorded", name)
			}
		}
		if err := d.StartCommand(ctx, ann); err != nil {
			t.Fatal(err)
		}
		if err := d.StartCommand(ctx, ann); err == nil {
			t.Error("one id recorded twice")
		}
	})
}
