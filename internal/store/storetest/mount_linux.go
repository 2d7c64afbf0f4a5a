package storetest

import "golang.org/x/sys/unix"

// bindReadOnly mounts dir at mnt, read-only (root only).
func bindReadOnly(dir, mnt string) error {
	if err := unix.Mount(dir, mnt, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if err := unix.Mount("", mnt, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		_ = unix.Unmount(mnt, 0)
		return err
	}
	return nil
}

func unmount(mnt string) error { return unix.Unmount(mnt, 0) }
