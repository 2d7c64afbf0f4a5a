//go:build !unix

package sqlite

import "os"

// accessW reports whether path may be written: a file is opened for
// writing (and closed at once); a directory by its permission bits.
func accessW(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if fi.Mode().Perm()&0o200 == 0 {
			return os.ErrPermission
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
