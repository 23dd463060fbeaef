package ipc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// File descriptors travel on the channel with the frame that announces
// them (message.FDs): the sender passes them as SCM_RIGHTS ancillary data
// of the frame's first bytes, so they arrive, in order, no later than the
// frame's end. The receiver reads every byte through recvmsg (a plain read
// would let the kernel close them), queues the descriptors as they come,
// and each frame takes its count from the front of the queue. A received
// descriptor is the receiver's to close; unclaimed ones are closed with the
// reader.

// fdsPerSend bounds the descriptors of one sendmsg (the kernel's
// SCM_MAX_FD is 253); a frame with more sends them over several of its
// bytes.
const fdsPerSend = 250

// frameReader reads frames from a channel, with the descriptors that came
// with them.
type frameReader struct {
	buf *bufio.Reader
	src *fdSource
}

func newFrameReader(conn net.Conn) *frameReader {
	src := &fdSource{conn: conn}
	if uc, ok := conn.(*net.UnixConn); ok {
		src.unix = uc
		src.oob = make([]byte, syscall.CmsgSpace(4*fdsPerSend))
	}
	return &frameReader{buf: bufio.NewReader(src), src: src}
}

// read reads one frame and hands it the descriptors it announces.
func (fr *frameReader) read() (message, error) {
	m, err := readFrame(fr.buf)
	if err != nil || m.FDs == 0 {
		return m, err
	}
	if m.FDs < 0 || m.FDs > len(fr.src.fds) {
		return message{}, fmt.Errorf("%w: %s announces %d descriptors, %d arrived", errBadFrame, m.Op, m.FDs, len(fr.src.fds))
	}
	m.files = append([]int(nil), fr.src.fds[:m.FDs]...)
	fr.src.fds = fr.src.fds[m.FDs:]
	return m, nil
}

// close closes the descriptors that arrived and no frame claimed.
func (fr *frameReader) close() {
	closeFDs(fr.src.fds)
	fr.src.fds = nil
}

// fdSource is the channel as the frame reader's bufio.Reader reads it,
// keeping the descriptors that arrive.
type fdSource struct {
	conn net.Conn
	unix *net.UnixConn // nil: a channel that cannot carry descriptors
	oob  []byte
	fds  []int
}

func (s *fdSource) Read(p []byte) (int, error) {
	if s.unix == nil {
		return s.conn.Read(p)
	}
	n, oobn, flags, _, err := s.unix.ReadMsgUnix(p, s.oob)
	n = max(n, 0) // -1 with some errors
	if oobn > 0 {
		fds, perr := parseRights(s.oob[:oobn])
		s.fds = append(s.fds, fds...)
		if err == nil {
			err = perr
		}
	}
	if err == nil && flags&syscall.MSG_CTRUNC != 0 {
		err = fmt.Errorf("%w: descriptors were lost (the control message was truncated)", errBadFrame)
	}
	return n, err
}

// parseRights returns the descriptors of every SCM_RIGHTS message in oob.
func parseRights(oob []byte) ([]int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var out []int
	for i := range msgs {
		fds, err := syscall.ParseUnixRights(&msgs[i])
		if err != nil {
			return out, err
		}
		out = append(out, fds...)
	}
	return out, nil
}

// writeWithDescriptors writes the frame b, passing fds with its first
// bytes.
func writeWithDescriptors(w io.Writer, b []byte, fds []int) error {
	uc, ok := w.(*net.UnixConn)
	if !ok {
		return errors.New("ipc: descriptors can only be passed on a Unix socket")
	}
	for len(fds) > 0 {
		k := min(len(fds), fdsPerSend)
		// One byte per batch, the rest of the frame with the last.
		chunk := b[:1]
		if k == len(fds) {
			chunk = b
		}
		n, _, err := uc.WriteMsgUnix(chunk, syscall.UnixRights(fds[:k]...), nil)
		if err != nil {
			return err
		}
		b, fds = b[n:], fds[k:]
		if len(b) == 0 && len(fds) > 0 {
			return fmt.Errorf("ipc: a frame too short to carry %d more descriptors", len(fds))
		}
	}
	_, err := uc.Write(b)
	return err
}

// closeFDs closes descriptors this process owns.
func closeFDs(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}
