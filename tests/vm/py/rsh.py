"""The remote shell Open MPI's launcher uses between the two test VMs (no ssh in the guests).

  rsh.py serve PORT        B: run each connection's command line under /bin/sh, its output
                           and errors sent back on the connection, which closes when it exits
  rsh.py [-opts] HOST CMD  A: as PRRTE's plm_ssh_agent (it calls `agent HOST CMD...`): run CMD
                           on HOST:PORT ($RSH_PORT, default 2222), print its output, exit with
                           its status

The command line travels as one line; the status comes back as the last line, "rsh-status N".
Only for the test network between two VMs: it runs whatever it is sent.
"""
import os
import socket
import subprocess
import sys
import threading

PORT = int(os.environ.get("RSH_PORT", "2222"))


def handle(conn):
    with conn:
        line = conn.makefile("rb").readline().decode()
        proc = subprocess.Popen(["/bin/sh", "-c", line], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            conn.sendall(chunk)
        conn.sendall(b"\nrsh-status %d\n" % proc.wait())


def serve(port):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("", port))
    srv.listen(16)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def run(host, cmd):
    with socket.create_connection((host, PORT), timeout=30) as conn:
        conn.settimeout(None)
        conn.sendall(cmd.replace("\n", " ").encode() + b"\n")
        data = b""
        for chunk in iter(lambda: conn.recv(65536), b""):
            data += chunk
            # Print all but a possible partial status line as it arrives.
            keep = data.rfind(b"\n")
            if keep > 0:
                sys.stdout.buffer.write(data[:keep])
                sys.stdout.flush()
                data = data[keep:]
    tail = data.strip().rsplit(b"\n", 1)
    if tail and tail[-1].startswith(b"rsh-status "):
        if len(tail) > 1:
            sys.stdout.buffer.write(tail[0] + b"\n")
        return int(tail[-1].split()[1])
    sys.stdout.buffer.write(data)
    return 255


def main(argv):
    if argv[:1] == ["serve"]:
        serve(int(argv[1]) if len(argv) > 1 else PORT)
    args = list(argv)
    while args and args[0].startswith("-"):  # ssh-style options PRRTE may pass (-x, -T)
        args.pop(0)
    if len(args) < 2:
        sys.exit(__doc__)
    sys.exit(run(args[0], " ".join(args[1:])))


if __name__ == "__main__":
    main(sys.argv[1:])
