#pragma once

// The soak's samples: named columns read together every interval, kept in memory, written as CSV
// (one row per sample, `t_s` first), drawn by a generated gnuplot script, and judged column by
// column with CheckGrowth (growth_check.h).
//
//   SoakSampler sampler([&] { snapshot = ReadMetrics(); });   // once before each row
//   sampler.AddColumn("gm_rss_kb", [&] { return ...; }, 2048, "rss");
//   sampler.Sample(seconds_since_start);
//   sampler.WriteCsv(path); sampler.WriteGnuplot(script, csv, png); sampler.Check();

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/soak/growth_check.h"

namespace nereid::bench {

class SoakSampler {
 public:
  explicit SoakSampler(std::function<void()> before_sample)
      : before_sample_(std::move(before_sample)) {}

  // `floor`: the growth tolerance over the last third (growth_check.h); negative: not judged.
  // `panel`: which picture the column is drawn in (columns of one panel share a unit).
  void AddColumn(std::string name, std::function<double()> read, double floor, std::string panel);
  // Reads one row (NaN for a value that could not be read).
  void Sample(double seconds);

  std::size_t size() const { return rows_.size(); }
  // Column `name` in the last row (NaN if none).
  double Last(const std::string& name) const;
  absl::Status WriteCsv(const std::string& path) const;
  // A gnuplot script drawing every panel of `csv` (one plot per panel, stacked) into `png`.
  absl::Status WriteGnuplot(const std::string& path, const std::string& csv,
                            const std::string& png) const;
  // The verdict of every judged column.
  std::vector<GrowthVerdict> Check() const;

 private:
  struct Column {
    std::string name;
    std::function<double()> read;
    double floor;
    std::string panel;
  };
  std::function<void()> before_sample_;
  std::vector<Column> columns_;
  std::vector<double> times_;
  std::vector<std::vector<double>> rows_;
};

}  // namespace nereid::bench
