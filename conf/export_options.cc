#include "conf/export_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstring>
#include <optional>

#include "common/auth_flavor.h"
#include "conf/ini_parser.h"

namespace nfs3d::conf::internal {
namespace {

using text::Cat;

void NoteNoEffect(OptionState* st, std::string note) {
  std::vector<std::string>& v = st->options.no_effect;
  if (std::find(v.begin(), v.end(), note) == v.end()) v.push_back(std::move(note));
}

// Options without a value. Per-flavor ones follow sec= (see OptionState).
struct Switch {
  std::string_view name;
  bool per_flavor;
  void (*apply)(OptionState*);
};

constexpr Switch kSwitches[] = {
    {"ro", true, [](OptionState* s) { s->options.read_only = true; }},
    {"rw", true, [](OptionState* s) { s->options.read_only = false; }},
    {"secure", true, [](OptionState* s) { s->options.secure = true; }},
    {"insecure", true, [](OptionState* s) { s->options.secure = false; }},
    {"root_squash", true, [](OptionState* s) { s->root_squash = true; }},
    {"no_root_squash", true, [](OptionState* s) { s->root_squash = false; }},
    {"all_squash", true, [](OptionState* s) { s->all_squash = true; }},
    {"no_all_squash", true, [](OptionState* s) { s->all_squash = false; }},
    {"sync", false, [](OptionState* s) { s->options.sync = true; }},
    {"async", false, [](OptionState* s) { s->options.sync = false; }},
    {"wdelay", false, [](OptionState* s) { s->options.wdelay = true; }},
    {"no_wdelay", false, [](OptionState* s) { s->options.wdelay = false; }},
    {"hide", false, [](OptionState* s) { s->options.nohide = false; }},
    {"nohide", false, [](OptionState* s) { s->options.nohide = true; }},
    {"crossmnt", false, [](OptionState* s) { s->options.crossmnt = true; }},
    {"nocrossmnt", false, [](OptionState* s) { s->options.crossmnt = false; }},
    {"subtree_check", false, [](OptionState* s) { s->options.subtree_check = true; }},
    {"no_subtree_check", false, [](OptionState* s) { s->options.subtree_check = false; }},
    {"auth_nlm", false, [](OptionState* s) { s->options.auth_nlm = true; }},
    {"no_auth_nlm", false, [](OptionState* s) { s->options.auth_nlm = false; }},
    {"secure_locks", false, [](OptionState* s) { s->options.auth_nlm = true; }},
    {"insecure_locks", false, [](OptionState* s) { s->options.auth_nlm = false; }},
    {"acl", false, [](OptionState* s) { s->options.acl = true; }},
    {"no_acl", false, [](OptionState* s) { s->options.acl = false; }},
    {"nordirplus", false, [](OptionState* s) { s->options.readdirplus = false; }},
    {"mountpoint", false, [](OptionState* s) { s->options.mountpoint = ""; }},
    {"mp", false, [](OptionState* s) { s->options.mountpoint = ""; }},
    {"pnfs", false, [](OptionState* s) { NoteNoEffect(s, "pnfs (NFSv4.1 layouts)"); }},
    {"no_pnfs", false, [](OptionState*) {}},
    {"security_label", false,
     [](OptionState* s) { NoteNoEffect(s, "security_label (NFSv4.2 labels)"); }},
    {"sign_fh", false, [](OptionState*) {}},  // nfs3d's handles always carry a MAC
};

std::string ApplySec(std::string_view opt, std::string_view value, OptionState* st) {
  if (value.empty()) return Cat("export option '", opt, "' needs a flavor list");
  for (std::string_view name : text::Split(value, ':')) {
    // nfs-utils' flavors (nfs3d serves them all), kept by their sec= names.
    const std::optional<Flavor> f = FlavorNamed(text::Lower(name));
    if (!f) {
      return Cat("unknown security flavor '", name, "' in '", opt,
                 "' (known: sys, none, krb5, krb5i, krb5p)");
    }
    const std::string canonical(FlavorName(*f));
    std::vector<std::string>& sec = st->options.sec;
    if (std::find(sec.begin(), sec.end(), canonical) == sec.end()) sec.push_back(canonical);
  }
  ++st->sec_lists;
  return "";
}

// fsid=root | fsid=N (strtoul base 0 as nfs-utils: 0x.. hex, 0.. octal) |
// fsid=<uuid> (32 hex digits, '-' or ':' between them).
std::string ApplyFsid(std::string_view opt, std::string_view value, OptionState* st) {
  if (text::Lower(value) == "root") {
    st->options.fsid = 0;
    st->options.fsid_uuid.reset();
    return "";
  }
  int base = 10;
  std::string_view digits = value;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
  }
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id, base);
  if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size()) {
    st->options.fsid = id;
    st->options.fsid_uuid.reset();
    return "";
  }
  std::string uuid;
  for (char c : value) {
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      uuid.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (c != '-' && c != ':') {
      uuid.clear();
      break;
    }
  }
  if (uuid.size() != 32) {
    return Cat("bad '", opt, "': fsid is 'root', a number below 2^32 or a UUID of 32 hex digits");
  }
  st->options.fsid.reset();
  st->options.fsid_uuid = uuid;
  return "";
}

bool IsIdList(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

// Options with a value. Returns the problem or "".
struct Valued {
  std::string_view name;
  std::string (*apply)(std::string_view opt, std::string_view value, OptionState*);
};

std::string ParseId(std::string_view opt, std::string_view value, uint32_t* out) {
  // nfs-utils uses strtol: "anonuid=-2" is the id (uid_t)-2.
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < INT32_MIN ||
      v > UINT32_MAX) {
    return Cat("export option '", opt, "' needs a numeric id");
  }
  *out = static_cast<uint32_t>(v);
  return "";
}

constexpr Valued kValued[] = {
    {"anonuid", [](std::string_view opt, std::string_view v,
                   OptionState* s) { return ParseId(opt, v, &s->options.anonuid); }},
    {"anongid", [](std::string_view opt, std::string_view v,
                   OptionState* s) { return ParseId(opt, v, &s->options.anongid); }},
    {"fsid", &ApplyFsid},
    {"sec", &ApplySec},
    {"mountpoint",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       std::optional<std::string> path = NormalizeExportPath(v);
       if (!path) return Cat("'", opt, "' needs an absolute path");
       s->options.mountpoint = *path;
       return std::string();
     }},
    {"cephfs",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       std::optional<std::string> path = NormalizeExportPath(v);
       if (!path) return Cat("'", opt, "' needs an absolute CephFS path");
       s->options.cephfs = *path;
       return std::string();
     }},
    {"cephfs_user",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       // A cephx id: no "client." prefix, no spaces.
       if (v.empty() || v.find_first_of(" \t") != std::string_view::npos ||
           v.substr(0, 7) == "client.") {
         return Cat("'", opt, "' needs a cephx user id without 'client.'");
       }
       s->options.cephfs_user = std::string(v);
       return std::string();
     }},
    {"cephfs_keyring",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       if (v.empty() || v[0] != '/') return Cat("'", opt, "' needs an absolute path");
       s->options.cephfs_keyring = std::string(v);
       return std::string();
     }},
    {"mp",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       std::optional<std::string> path = NormalizeExportPath(v);
       if (!path) return Cat("'", opt, "' needs an absolute path");
       s->options.mountpoint = *path;
       return std::string();
     }},
    {"refer",
     [](std::string_view opt, std::string_view, OptionState* s) {
       NoteNoEffect(s, Cat(opt, " (NFSv4 referral)"));
       return std::string();
     }},
    {"replicas",
     [](std::string_view opt, std::string_view, OptionState* s) {
       NoteNoEffect(s, Cat(opt, " (NFSv4 fs_locations)"));
       return std::string();
     }},
    {"xprtsec",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       // nfs-utils' list (exports(5)); its order only matters to NFSv4's
       // SECINFO, so NFSv3 keeps the set.
       if (v.empty()) return Cat("export option '", opt, "' needs a mode list");
       uint8_t modes = 0;
       for (std::string_view mode : text::Split(v, ':')) {
         if (mode == "none") {
           modes |= ExportOptions::kXprtsecNone;
         } else if (mode == "tls") {
           modes |= ExportOptions::kXprtsecTls;
         } else if (mode == "mtls") {
           modes |= ExportOptions::kXprtsecMtls;
         } else {
           return Cat("unknown transport security '", mode, "' in '", opt,
                      "' (known: none, tls, mtls)");
         }
       }
       s->options.xprtsec = modes;
       return std::string();
     }},
    {"reexport",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       if (v != "auto-fsidnum" && v != "predefined-fsidnum" && v != "none") {
         return Cat("bad '", opt, "' (auto-fsidnum, predefined-fsidnum or none)");
       }
       NoteNoEffect(s, Cat(opt, " (re-exporting NFS mounts: give fsid= instead)"));
       return std::string();
     }},
    {"squash_uids",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       if (!IsIdList(v)) return Cat("bad id list in '", opt, "'");
       s->in_squash_list = true;
       NoteNoEffect(s, "squash_uids= (legacy, ignored as by knfsd)");
       return std::string();
     }},
    {"squash_gids",
     [](std::string_view opt, std::string_view v, OptionState* s) {
       if (!IsIdList(v)) return Cat("bad id list in '", opt, "'");
       s->in_squash_list = true;
       NoteNoEffect(s, "squash_gids= (legacy, ignored as by knfsd)");
       return std::string();
     }},
};

// A per-flavor switch after a second sec= list (see sec_lists): applied
// only as far as it restricts.
void ApplyNarrowing(const Switch& sw, OptionState* st) {
  OptionState wanted = *st;
  sw.apply(&wanted);
  const bool widens = (!wanted.options.read_only && st->options.read_only) ||
                      (!wanted.options.secure && st->options.secure) ||
                      (!wanted.root_squash && st->root_squash) ||
                      (!wanted.all_squash && st->all_squash);
  st->options.read_only = st->options.read_only || wanted.options.read_only;
  st->options.secure = st->options.secure || wanted.options.secure;
  st->root_squash = st->root_squash || wanted.root_squash;
  st->all_squash = st->all_squash || wanted.all_squash;
  if (widens) {
    NoteNoEffect(st, Cat(sw.name,
                         " after a second sec= list (one option set serves all "
                         "flavors; the more restrictive setting is kept)"));
  }
}

}  // namespace

std::string ApplyOptions(std::string_view list, OptionState* st) {
  st->in_squash_list = false;
  for (std::string_view opt : text::Split(list, ',')) {
    opt = text::Trim(opt);
    if (opt.empty()) continue;
    if (st->in_squash_list && IsIdList(opt)) continue;  // "squash_uids=0-15,20"
    st->in_squash_list = false;
    size_t eq = opt.find('=');
    std::string_view name = opt.substr(0, eq);
    if (eq == std::string_view::npos) {
      const Switch* sw = nullptr;
      for (const Switch& s : kSwitches) {
        if (s.name == name) sw = &s;
      }
      if (sw == nullptr) {
        bool wants_value = false;
        for (const Valued& v : kValued) wants_value = wants_value || v.name == name;
        return wants_value ? Cat("export option '", name, "' needs a value ('", name, "=...')")
                           : Cat("unknown export option '", opt, "'");
      }
      if (sw->per_flavor && st->sec_lists > 1) {
        ApplyNarrowing(*sw, st);
      } else {
        sw->apply(st);
      }
      continue;
    }
    const Valued* valued = nullptr;
    for (const Valued& v : kValued) {
      if (v.name == name) valued = &v;
    }
    if (valued == nullptr) {
      for (const Switch& s : kSwitches) {
        if (s.name == name) return Cat("export option '", name, "' takes no value");
      }
      return Cat("unknown export option '", opt, "'");
    }
    if (std::string err = valued->apply(opt, opt.substr(eq + 1), st); !err.empty()) return err;
  }
  return "";
}

std::string FinishOptions(const OptionState& st, ExportOptions* out) {
  *out = st.Finish();
  return "";
}

void NoteOptions(const ExportOptions& o, std::string_view where, std::vector<std::string>* notes) {
  for (const std::string& n : o.no_effect) {
    notes->push_back(Cat(where, ": accepted, no effect on NFSv3: ", n));
  }
}

}  // namespace nfs3d::conf::internal
