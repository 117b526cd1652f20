package main

import (
	"context"
	"io/fs"
	"path/filepath"
	"syscall"
)

// storeUse is what the components take in the broker: the server's store
// limit (nats-server's default, most of the free disk), what streams set
// aside from it, the message bytes it counts, and the bytes its store
// directory takes on disk, in allocated blocks (stream and consumer metadata included).
type storeUse struct {
	Limit     int64  `json:"limit"`
	Reserved  uint64 `json:"reserved"`
	Accounted uint64 `json:"accounted"`
	OnDisk    int64  `json:"onDisk"`
}

func (e *env) storeUse(ctx context.Context) (storeUse, error) {
	info, err := e.js.AccountInfo(ctx)
	if err != nil {
		return storeUse{}, err
	}
	u := storeUse{Limit: e.nats.Server().JetStreamConfig().MaxStore, Reserved: info.ReservedStore, Accounted: info.Store}
	err = filepath.WalkDir(filepath.Join(e.natsDir, "js"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if st, ok := fi.Sys().(*syscall.Stat_t); err == nil && ok {
			u.OnDisk += st.Blocks * 512 // allocated, as du counts
		}
		return err
	})
	return u, err
}
