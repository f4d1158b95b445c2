// nfs3bench output: a dd/nuttcp-style line a person reads at a glance, a JSON
// line per run for scripts, CSV rows for sweeps.
#ifndef NFS3D_TOOLS_NFS3BENCH_REPORT_H_
#define NFS3D_TOOLS_NFS3BENCH_REPORT_H_

#include <string>

#include "tools/nfs3bench/workloads.h"

namespace nfs3d::bench {

// MB = 10^6 bytes and Mbit = 10^6 bits, as dd and nuttcp's Mbps.
std::string HumanLine(const RunResult& r);
std::string JsonLine(const RunResult& r);
std::string CsvHeader();
std::string CsvRow(const RunResult& r);
// "8k", "1m" for block sizes; parses the same ("64k", "1M", "4096").
std::string SizeName(uint64_t bytes);
// SizeName, or "pref" for kPreferredSize.
std::string BlockSizeName(uint64_t bs);
bool ParseSize(const std::string& text, uint64_t* out);

}  // namespace nfs3d::bench

#endif  // NFS3D_TOOLS_NFS3BENCH_REPORT_H_
