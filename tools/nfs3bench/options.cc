#include "tools/nfs3bench/options.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace nfs3d::bench {
namespace {

const std::set<std::string>& KnownFlags(const std::string& command) {
  static const std::set<std::string> kCommon = {"proto",
                                                "workload",
                                                "bs",
                                                "outstanding",
                                                "stable",
                                                "size",
                                                "time",
                                                "ops",
                                                "file-size",
                                                "dir",
                                                "keep",
                                                "no-verify",
                                                "seed",
                                                "port",
                                                "mount-port",
                                                "timeout",
                                                "timeo",
                                                "uid",
                                                "gid",
                                                "resvport",
                                                "send-per-call",
                                                "sec",
                                                "krb5-principal",
                                                "krb5-keytab",
                                                "krb5-target",
                                                "tls",
                                                "tls-cert",
                                                "tls-key",
                                                "dir-entries",
                                                "csv",
                                                "plot",
                                                "no-json",
                                                "help",
                                                "version",
                                                "server-pid"};
  static const std::set<std::string> kRun = [] {
    std::set<std::string> s = kCommon;
    for (const char* f : {"connections", "interval"}) s.insert(f);
    return s;
  }();
  static const std::set<std::string> kLab = [] {
    std::set<std::string> s = kCommon;
    for (const char* f : {"mtu", "rate", "netem", "server-cmd", "nfs3d", "export-dir",
                          "nuttcp-time", "rpcbind", "export-path", "udp-pacing"}) {
      s.insert(f);
    }
    return s;
  }();
  static const std::set<std::string> kPattern = {"size", "seed", "help", "version"};
  if (command == "lab") return kLab;
  if (command == "pattern") return kPattern;
  if (command == "run") return kRun;
  return kCommon;
}

}  // namespace

bool IsSwitch(const std::string& name) {
  return name == "keep" || name == "no-verify" || name == "resvport" || name == "send-per-call" ||
         name == "no-json" || name == "help" || name == "version" || name == "rpcbind";
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

absl::StatusOr<CommandLine> ParseCommandLine(int argc, char** argv) {
  CommandLine cl;
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    std::string first = argv[i];
    if (first == "run" || first == "sweep" || first == "lab" || first == "pattern") {
      cl.command = first;
      ++i;
    }
  }
  if (cl.command.empty()) cl.command = "run";
  const std::set<std::string>& known = KnownFlags(cl.command);
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2), value;
      size_t eq = name.find('=');
      bool has_value = eq != std::string::npos;
      if (has_value) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      if (!known.count(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option --", name, " for '", cl.command, "'"));
      }
      if (IsSwitch(name)) {
        if (has_value)
          return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      } else if (!has_value) {
        if (i + 1 >= argc)
          return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
        value = argv[++i];
      }
      cl.flags[name] = value;
    } else if (a == "-h") {
      cl.flags["help"] = "";
    } else if (!a.empty() && a[0] == '-') {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", a));
    } else {
      cl.positional.push_back(a);
    }
  }
  return cl;
}

const char* UsageText() {
  return R"(usage:
  nfs3bench [run] HOST:/export [options]    run workloads, one line + one JSON line each
  nfs3bench sweep HOST:/export [options]    proto x bs x outstanding grid -> CSV + plot
  nfs3bench lab [options]                   veth lab in private namespaces: server + nuttcp + sweep
  nfs3bench pattern --size N [--seed S]     write the data pattern to stdout (md5sum checks)

HOST is a numeric IPv4 address or [IPv6]. Sizes take k/m/g suffixes (binary).

workload options:
  --proto tcp|udp            transport (sweep/lab: list, default udp,tcp; run: tcp)
  --workload LIST            write,read,randread,randwrite,getattr,lookup,create,readdirplus,
                             meta (= the four metadata ones), null (NFS NULL), createsetattr
                             (CREATE+SETATTR+REMOVE); default write,read
  --bs LIST                  bytes per READ/WRITE call, clamped to the server's rtmax/wtmax;
                             "pref" = the server's FSINFO rtpref/wtpref, what the Linux
                             client uses when mounted without rsize=/wsize= (default 64k;
                             sweep 8k,16k,64k,1m; lab pref,8k,32k,1m)
  --outstanding LIST         calls in flight, 1 = a simple client (default 8; lab 1,4,16:
                             the Linux client keeps up to 16 in flight over UDP)
  --stable MODE              unstable (UNSTABLE + COMMIT at the end, default), datasync,
                             filesync, sync (FILE_SYNC one at a time, like mount -o sync)
  --size N | --time SEC      stop after N bytes, or after SEC seconds (default --size 64m)
  --ops N                    metadata operations per run when no --time (default 1000)
  --file-size N              file for read/random runs, wrap point of timed writes (64m)
  --dir-entries N            files in the directory for lookup/readdirplus (1000)
  --connections N            run: getattr/null/write over N TCP connections of their own
                             (up to 100000), the --outstanding calls (default N: one
                             each) spread over them, from one epoll thread (write: every
                             call writes --bs bytes at offset 0 of a new file); reports
                             p50/p99/max latency, errors, reconnects (a connection the
                             server closes is opened again and its calls sent again) and
                             the slowest and median 100 ms and 1 s window in calls/s
  --interval SEC             with --connections: each connection sends its next call SEC
                             after the last (0.5, 1: an idle crowd of mounts beside busy
                             clients); default: at once when the reply arrives
  --no-verify                skip checking read data / reading back written data
  --seed N                   data pattern seed (1)
  --dir NAME                 work directory under the export (nfs3bench.PID)
  --keep                     keep the work directory and its 'data' file
connection options:
  --port N --mount-port N    skip the portmapper (needed when the server has none)
  --timeout SEC              a call fails after SEC without reply (30)
  --timeo MS                 UDP: first retransmit after MS, doubling (1000)
  --uid N --gid N            AUTH_SYS identity (0/0)
  --sec sys|krb5|krb5i|krb5p  NFS calls under AUTH_SYS (default) or RPCSEC_GSS, one
                             context per connection (MOUNT stays AUTH_SYS)
  --krb5-principal NAME      initiator principal whose key --krb5-keytab holds
                             (default: the ticket cache, as after kinit)
  --krb5-keytab FILE         client keytab for --krb5-principal
  --krb5-target NAME         service principal (default nfs@SERVER)
  --tls CA_FILE              NFS connections in RPC-with-TLS (RFC 9289), the server's
                             certificate checked against CA_FILE; records encrypted
                             in user space at this end (MOUNT stays in clear)
  --tls-cert FILE --tls-key FILE  a client certificate for xprtsec=mtls exports
  --resvport                 use a source port < 1024
  --send-per-call            TCP: one send per call, as the Linux client does (default: as
                             many queued calls per send as fit, less client CPU)
  --server-pid PID           report this local process's CPU seconds over each timed part
output:
  --csv FILE  --plot FILE.png|FILE.svg  (sweep, lab)   --no-json
lab options (root; everything lives in private namespaces and is removed at the end):
  --mtu LIST                 veth MTUs, e.g. 1500,9000,16114 (default 1500)
  --rate RATE                tbf rate limit on both ends, e.g. 1gbit (default none)
  --netem "ARGS"             netem on both ends, e.g. "delay 1ms loss 1%" (needs sch_netem)
  --nfs3d PATH               server binary (default: next to nfs3bench in the build tree)
  --server-cmd "CMD"         run this server instead; {export} is replaced by the export dir,
                             it must serve NFS on --port/--mount-port (2049/20048)
  --rpcbind                  start rpcbind in the server namespace (e.g. for ganesha)
  --export-dir DIR           export this directory (default: a tmpfs the lab mounts)
  --export-path PATH         path to mount (default: the export dir)
  --nuttcp-time SEC          seconds per nuttcp measurement (3)
  --udp-pacing LIST          nfs3d's [udp] pacing, each in turn (UDP rows side by side), e.g.
                             off,auto (default: nfs3d's default)
  -h, --help  --version      this text; the version and build options
exit status: 0 ok, 1 a run failed (RPC/NFS error, data mismatch), 2 usage, 3 setup failed
)";
}

}  // namespace nfs3d::bench
