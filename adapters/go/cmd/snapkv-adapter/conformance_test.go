package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestConformanceSuite runs the kit's committed suite against this adapter, so that `go test`
// fails when the port stops conforming. The kit is a Python package: pip install it first
// (see the kit's README, "Installing"). Under CI a missing kit is a failure, not a skip.
func TestConformanceSuite(t *testing.T) {
	kit, err := exec.LookPath("snapkv-conformance")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("snapkv-conformance is not installed")
		}
		t.Skip("snapkv-conformance is not installed")
	}
	adapter := filepath.Join(t.TempDir(), "snapkv-adapter")
	if out, err := exec.Command("go", "build", "-o", adapter, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(kit, "run", "--adapter", adapter).CombinedOutput(); err != nil {
		t.Fatalf("snapkv-conformance run: %v\n%s", err, out)
	}
}
