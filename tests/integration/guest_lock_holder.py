# In the lab guest (lab_lock, lab_heads): takes an exclusive lock on
# argv[1], creates argv[2] once it has it, and holds it (across a server
# restart or takeover) until /tmp/release exists.
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)
open(sys.argv[2], "w").close()
print("LOCKTEST holder has the lock", flush=True)
while not os.path.exists("/tmp/release"):
    time.sleep(0.2)
fcntl.lockf(fd, fcntl.LOCK_UN, 0, 0)
print("LOCKTEST holder released", flush=True)
