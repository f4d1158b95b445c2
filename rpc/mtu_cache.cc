#include "rpc/mtu_cache.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace nfs3d::rpc {
namespace {

// Only used when rtnetlink is unavailable: an MTU rarely changes, and a stale
// value only affects size hints.
constexpr auto kUnfollowedTtl = std::chrono::seconds(30);

int OpenLinkListener() {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd < 0) return -1;
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = RTMGRP_LINK;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The IFLA_MTU attribute of an RTM_NEWLINK message, or 0 if it has none.
uint32_t MtuAttribute(const nlmsghdr* h) {
  const auto* info = static_cast<const ifinfomsg*>(NLMSG_DATA(h));
  int len = static_cast<int>(h->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof(*info)));
  for (const rtattr* a = IFLA_RTA(info); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == IFLA_MTU && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
      uint32_t mtu;
      std::memcpy(&mtu, RTA_DATA(a), sizeof(mtu));
      return mtu;
    }
  }
  return 0;
}

}  // namespace

MtuCache::MtuCache()
    : ioctl_fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)), netlink_fd_(OpenLinkListener()) {
  if (netlink_fd_ < 0) {
    NFS3D_LOG_WARNING("rtnetlink unavailable (%s): MTU changes are seen within 30 s",
                      std::strerror(errno));
    return;
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    close(netlink_fd_);
    netlink_fd_ = -1;
    return;
  }
  following_ = true;
  listener_ = std::thread([this] { Listen(); });
}

MtuCache::~MtuCache() {
  if (listener_.joinable()) {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof(one));
    listener_.join();
  }
  for (int fd : {ioctl_fd_, netlink_fd_, stop_fd_}) {
    if (fd >= 0) close(fd);
  }
}

uint32_t MtuCache::Lookup(int ifindex) const {
  ifreq ifr{};
  if (ioctl_fd_ >= 0 && if_indextoname(static_cast<unsigned>(ifindex), ifr.ifr_name) != nullptr &&
      ioctl(ioctl_fd_, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0) {
    return static_cast<uint32_t>(ifr.ifr_mtu);
  }
  return 0;
}

uint32_t MtuCache::Get(int ifindex) {
  if (ifindex <= 0) return 0;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(ifindex);
    // Followed entries never expire, so the common case reads no clock.
    if (it != entries_.end() &&
        (follows_link_changes() ||
         std::chrono::steady_clock::now() - it->second.fetched < kUnfollowedTtl)) {
      return it->second.mtu;
    }
    generation = generation_;
  }
  const uint32_t mtu = Lookup(ifindex);
  std::lock_guard<std::mutex> lock(mu_);
  if (generation == generation_) entries_[ifindex] = Entry{mtu, std::chrono::steady_clock::now()};
  return mtu;
}

void MtuCache::Listen() {
  pollfd fds[2] = {{netlink_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents != 0 && !ReadLinkMessages()) break;
  }
  // The listener failed: fall back to entries that expire.
  NFS3D_LOG_WARNING("rtnetlink listener stopped (%s): MTU changes are seen within 30 s",
                    std::strerror(errno));
  std::lock_guard<std::mutex> lock(mu_);
  following_ = false;
  entries_.clear();
  ++generation_;
}

bool MtuCache::ReadLinkMessages() {
  alignas(nlmsghdr) char buf[16384];
  while (true) {
    ssize_t n = recv(netlink_fd_, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      if (errno == ENOBUFS) {
        // Announcements were lost: forget everything, look up again.
        std::lock_guard<std::mutex> lock(mu_);
        entries_.clear();
        ++generation_;
        continue;
      }
      return false;
    }
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    int len = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK) continue;
      if (h->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) continue;
      const int ifindex = static_cast<const ifinfomsg*>(NLMSG_DATA(h))->ifi_index;
      const uint32_t mtu = h->nlmsg_type == RTM_NEWLINK ? MtuAttribute(h) : 0;
      if (mtu != 0) {
        entries_[ifindex] = Entry{mtu, now};
      } else {
        entries_.erase(ifindex);
      }
      ++generation_;
    }
  }
}

}  // namespace nfs3d::rpc
