# Sourced by the lab guest scripts of lab_tls_test.sh (concatenated before
# them): busy_write DIR [MAX [MIB]] writes files of MIB (4) MiB of random
# bytes, DIR/busy-1, busy-2, ..., each with conv=fsync, one after another
# until busy_done (the caller's function) is true, at most MAX (300); their
# md5s go to $OUT/busy.md5 (md5sum -c format). A write that fails ends the
# script (bash -e).
busy_write() {
  local dir=$1 max=${2:-300} mib=${3:-4} n=0
  : > "$OUT/busy.md5"
  while ! busy_done && [ "$n" -lt "$max" ]; do
    n=$((n + 1))
    dd if=/dev/urandom of="$OUT/chunk" bs=1M count="$mib" status=none
    echo "$(md5sum < "$OUT/chunk" | cut -d' ' -f1)  $dir/busy-$n" >> "$OUT/busy.md5"
    dd if="$OUT/chunk" of="$dir/busy-$n" bs=1M conv=fsync status=none
  done
  echo "busy_write: $n files of $mib MiB written"
}
