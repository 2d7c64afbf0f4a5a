//go:build !linux

package cli

import "errors"

func bindReadOnly(dir, mnt string) error { return errors.New("bind mounts are Linux only") }

func unmount(mnt string) error { return nil }
