package handlers_test

import "testing"

// TestGoldenEncryption pins the answers of shed_encryption: status in each state (not set
// up, active, disabled by the user, unavailable without a master key), setup (new key and
// taken up again), migrate and disable.
func TestGoldenEncryption(t *testing.T) {
	e := start(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	enc := func(args map[string]any) reply { return e.post("shed_encryption", args, nil) }
	e.write(zoneDir+"old.txt", "written before setup\n")
	pinGolden(t, "encryption_status_not_setup", enc(map[string]any{"action": "status"}), nil)
	pinGolden(t, "encryption_setup", enc(map[string]any{"action": "setup"}), nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": "sealed\n"}, nil))
	pinGolden(t, "encryption_status_active", enc(map[string]any{"action": "status"}), nil)
	pinGolden(t, "encryption_migrate", enc(map[string]any{"action": "migrate"}), nil)
	pinGolden(t, "encryption_disable", enc(map[string]any{"action": "disable", "confirm": true}), nil)
	pinGolden(t, "encryption_status_disabled", enc(map[string]any{"action": "status"}), nil)
	pinGolden(t, "encryption_setup_again", enc(map[string]any{"action": "setup"}), nil)

	plain := start(t, nil)
	pinGolden(t, "encryption_status_unavailable", plain.post("shed_encryption", map[string]any{"action": "status"}, nil), nil)
}
