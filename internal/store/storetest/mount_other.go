//go:build !linux

package storetest

import "errors"

func bindReadOnly(dir, mnt string) error { return errors.New("bind mounts are Linux only") }

func unmount(mnt string) error { return nil }
