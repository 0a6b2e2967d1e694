#include "bench/soak/soak_sampler.h"

#include <cmath>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nereid::bench {

void SoakSampler::AddColumn(std::string name, std::function<double()> read, double floor,
                            std::string panel) {
  columns_.push_back({std::move(name), std::move(read), floor, std::move(panel)});
}

void SoakSampler::Sample(double seconds) {
  if (before_sample_) before_sample_();
  std::vector<double> row;
  row.reserve(columns_.size());
  for (const Column& column : columns_) row.push_back(column.read());
  times_.push_back(seconds);
  rows_.push_back(std::move(row));
}

double SoakSampler::Last(const std::string& name) const {
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c].name == name && !rows_.empty()) return rows_.back()[c];
  }
  return std::nan("");
}

absl::Status SoakSampler::WriteCsv(const std::string& path) const {
  std::ofstream out(path);
  out << "t_s";
  for (const Column& column : columns_) out << "," << column.name;
  out << "\n";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    out << absl::StrFormat("%.1f", times_[r]);
    for (double value : rows_[r]) out << "," << (std::isnan(value) ? "nan" : absl::StrCat(value));
    out << "\n";
  }
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status SoakSampler::WriteGnuplot(const std::string& path, const std::string& csv,
                                       const std::string& png) const {
  std::map<std::string, std::vector<std::size_t>> panels;  // panel → CSV column numbers (1-based)
  std::vector<std::string> order;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (panels.find(columns_[c].panel) == panels.end()) order.push_back(columns_[c].panel);
    panels[columns_[c].panel].push_back(c + 2);  // column 1 is t_s
  }
  std::ofstream out(path);
  out << "# Drawn by: gnuplot " << path << "  (apt-get install gnuplot-nox)\n"
      << "set datafile separator ','\nset datafile missing 'nan'\n"
      // noenhanced: the column names' underscores are not subscripts.
      << absl::StrFormat("set terminal pngcairo noenhanced size 1400,%d font ',9'\n",
                         300 * order.size())
      << "set output '" << png << "'\n"
      << absl::StrFormat("set multiplot layout %d,1\n", order.size())
      << "set key outside right\nset grid\nset xlabel 'seconds'\n";
  for (const std::string& panel : order) {
    out << "set title '" << panel << "'\nplot ";
    const std::vector<std::size_t>& columns = panels[panel];
    for (std::size_t i = 0; i < columns.size(); ++i) {
      out << (i ? ", " : "") << "'" << csv << "' using 1:" << columns[i]
          << " with lines title columnheader(" << columns[i] << ")";
    }
    out << "\n";
  }
  out << "unset multiplot\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::vector<GrowthVerdict> SoakSampler::Check() const {
  std::vector<GrowthVerdict> verdicts;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c].floor < 0) continue;
    std::vector<SeriesPoint> points;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      if (!std::isnan(rows_[r][c])) points.push_back({times_[r], rows_[r][c]});
    }
    verdicts.push_back(CheckGrowth(columns_[c].name, points, columns_[c].floor));
  }
  return verdicts;
}

}  // namespace nereid::bench
