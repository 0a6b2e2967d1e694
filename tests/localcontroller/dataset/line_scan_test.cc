#include "localcontroller/dataset/line_scan.h"
#include "localcontroller/dataset/line_segment.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace nereid::lc::dataset {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

uint64_t Lines(ScanIsa isa, const std::string& s) {
  LineScanState state;
  return ScanLinesWith(isa, Bytes(s), s.size(), &state);
}

uint64_t CsvRecords(ScanIsa isa, const std::string& s) {
  CsvScanState state;
  return ScanCsvWith(isa, Bytes(s), s.size(), &state);
}

// Pads a short example to several blocks so the SIMD paths (not just the tails) see it, placing
// the interesting bytes across a 64-byte boundary.
std::string Shifted(const std::string& s, size_t prefix_lines) {
  std::string out;
  for (size_t i = 0; i < prefix_lines; ++i) out += "x\n";
  out += std::string(61, ' ');  // whitespace only: does not change the count
  out += "\n";
  return out + s;
}

TEST_CASE("line kernels count non-empty lines", "[scan]") {
  struct Case {
    std::string text;
    uint64_t lines;
  };
  const std::vector<Case> cases = {
      {"", 0},
      {"a", 1},
      {"a\n", 1},
      {"a\nb", 2},
      {"a\r\nb\r\n", 2},
      {"\n\n\n", 0},
      {" \t\r\n\v\f\n", 0},
      {"  a  \n   \n b", 2},
      {"\r\n\r\nx\r\n", 1},
      {std::string(70000, 'z') + "\n" + std::string(200000, 'y'), 2},  // lines over 64 KiB
      {std::string(1000, '\n') + "q", 1},
      {std::string(1000, ' ') + "q" + std::string(1000, ' '), 1},
  };
  for (ScanIsa isa : SupportedScanIsas()) {
    INFO("isa " << ScanIsaName(isa));
    for (const Case& c : cases) {
      INFO("text size " << c.text.size());
      CHECK(Lines(isa, c.text) == c.lines);
      for (size_t pad = 0; pad < 3; ++pad) CHECK(Lines(isa, Shifted(c.text, pad)) == c.lines + pad);
    }
  }
}

TEST_CASE("csv kernels count records including the header", "[scan]") {
  struct Case {
    std::string text;
    uint64_t records;
  };
  const std::vector<Case> cases = {
      {"", 0},
      {"h1,h2\n", 1},
      {"h1,h2", 1},
      {"h\n1\n2\n", 3},
      {"h\r\n1\r\n2", 3},
      {"h\n\"a\nb\",c\n2\n", 3},             // quoted newline
      {"h\n\"a\"\"\nb\"\"\",c\n2\n", 3},     // escaped quotes around a quoted newline
      {"h\n\"\"\"\"\n", 2},                  // a field that is one escaped quote
      {"h\n,,,\n", 2},                        // empty fields still make a record
      {"h\n   \n\n", 1},                      // whitespace-only records do not count
      {"h\na\"b\nc\n", 3},                    // literal quote inside an unquoted field
      {"h\n\"a\"b\"\nc\n", 3},                // text after a closing quote, then a literal quote
      {"h\n \"a\nb\"\n", 3},                  // quote after a space is literal (no skipinitialspace)
      {"h\n\"a,\n\n\nb\"\n", 2},
      {"h\n\"open\nnever closed", 2},
  };
  for (ScanIsa isa : SupportedScanIsas()) {
    INFO("isa " << ScanIsaName(isa));
    for (const Case& c : cases) {
      INFO("text: " << c.text);
      CHECK(CsvRecords(isa, c.text) == c.records);
      for (size_t pad = 0; pad < 3; ++pad) {
        CHECK(CsvRecords(isa, Shifted(c.text, pad)) == c.records + pad);
      }
    }
  }
}

TEST_CASE("csv state tells whether a quote is still open", "[scan]") {
  for (ScanIsa isa : SupportedScanIsas()) {
    CsvScanState state;
    const std::string text = "h\n\"a\n";
    ScanCsvWith(isa, Bytes(text), text.size(), &state);
    CHECK(state.state == CsvState::kQuoted);
    const std::string rest = "b\"\n";
    ScanCsvWith(isa, Bytes(rest), rest.size(), &state);
    CHECK(state.state == CsvState::kFieldStart);
    CHECK_FALSE(state.in_record);
  }
}

// Random inputs over a small alphabet that hits every transition; every kernel, fed in random
// chunks, must agree with the byte-at-a-time state machine fed in one piece.
TEST_CASE("kernels agree with the reference machine on random input in random chunks", "[scan]") {
  std::mt19937_64 rng(12345);
  const std::string alphabet = "ab\n\n\r \t\",\",,\n\"";
  for (int round = 0; round < 300; ++round) {
    std::string text(rng() % 3000, 'a');
    for (char& ch : text) ch = alphabet[rng() % alphabet.size()];
    if (round % 3 == 0) {  // fewer quotes: mostly the fast path
      for (char& ch : text) {
        if (ch == '"' && rng() % 8 != 0) ch = 'q';
      }
    }
    LineScanState ref_lines;
    CsvScanState ref_csv;
    const uint64_t want_lines = ScanLinesWith(ScanIsa::kScalar, Bytes(text), text.size(), &ref_lines);
    const uint64_t want_csv = ScanCsvWith(ScanIsa::kScalar, Bytes(text), text.size(), &ref_csv);
    for (ScanIsa isa : SupportedScanIsas()) {
      LineScanState lines;
      CsvScanState csv;
      uint64_t got_lines = 0;
      uint64_t got_csv = 0;
      size_t pos = 0;
      while (pos < text.size()) {
        const size_t n = std::min<size_t>(text.size() - pos, 1 + rng() % 300);
        got_lines += ScanLinesWith(isa, Bytes(text) + pos, n, &lines);
        got_csv += ScanCsvWith(isa, Bytes(text) + pos, n, &csv);
        pos += n;
      }
      INFO("round " << round << " isa " << ScanIsaName(isa));
      REQUIRE(got_lines == want_lines);
      REQUIRE(lines.in_line == ref_lines.in_line);
      REQUIRE(got_csv == want_csv);
      REQUIRE(csv.state == ref_csv.state);
      REQUIRE(csv.in_record == ref_csv.in_record);
    }
  }
}

// Inputs long enough for the vector path of the line kernels (8 KiB chunks): mostly clean lines
// with a varying share of indented and whitespace-only lines (which make a chunk fall back to the
// block path), lines that end exactly at chunk edges, and a lane that counts a start in every
// block (the per-byte accumulators must not overflow).
TEST_CASE("line kernels agree with the reference on long inputs with rare indentation", "[scan]") {
  std::mt19937_64 rng(777);
  std::vector<std::string> texts;
  for (const int indent_per_mille : {0, 1, 20, 500}) {
    std::string text;
    while (text.size() < 150'000) {
      if (static_cast<int>(rng() % 1000) < indent_per_mille) {
        text.append(1 + rng() % 3, " \t\r\v\f"[rng() % 5]);
      }
      const size_t len = rng() % 90;
      for (size_t i = 0; i < len; ++i) text += "ab \t\rxyz"[rng() % 9];
      text += rng() % 7 == 0 ? "\r\n" : "\n";
    }
    texts.push_back(text);
  }
  // Regions: indented lines (the vector path keeps failing and backs off further each time), then
  // clean lines (it takes over again), then rare indentation.
  std::string regions;
  for (int region = 0; region < 6; ++region) {
    for (int line = 0; line < 12'000; ++line) {
      if (region % 3 == 0 || (region % 3 == 2 && line % 300 == 0)) regions += "  ";
      regions += "images/train/" + std::to_string(rng() % 100'000) + ".jpg 7\n";
    }
  }
  texts.push_back(regions);
  // "a\n" in the same lanes of both 32-byte halves of every 64-byte block.
  std::string dense;
  for (int i = 0; i < 4096; ++i) dense += std::string(30, 'x') + "\na" + std::string(30, 'x') + "\na";
  texts.push_back(dense);
  // Whitespace after the line end that closes a chunk, and a chunk that starts inside an
  // indented line's leading whitespace.
  std::string edges(3 * 8192, 'y');
  edges[8191] = '\n';
  edges[8192] = ' ';
  edges[2 * 8192 - 2] = '\n';
  edges[2 * 8192 - 1] = '\t';
  edges[2 * 8192] = ' ';
  texts.push_back(edges);

  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string& text = texts[t];
    for (const bool in_line : {false, true}) {
      LineScanState ref;
      ref.in_line = in_line;
      const uint64_t want = ScanLinesWith(ScanIsa::kScalar, Bytes(text), text.size(), &ref);
      for (ScanIsa isa : SupportedScanIsas()) {
        INFO("text " << t << " in_line " << in_line << " isa " << ScanIsaName(isa));
        LineScanState whole;
        whole.in_line = in_line;
        CHECK(ScanLinesWith(isa, Bytes(text), text.size(), &whole) == want);
        CHECK(whole.in_line == ref.in_line);
        // Random pieces from one byte to several chunks, at any alignment.
        LineScanState pieces;
        pieces.in_line = in_line;
        uint64_t got = 0;
        size_t pos = 0;
        while (pos < text.size()) {
          const size_t n = std::min<size_t>(text.size() - pos, 1 + rng() % 40'000);
          got += ScanLinesWith(isa, Bytes(text) + pos, n, &pieces);
          pos += n;
        }
        CHECK(got == want);
        CHECK(pieces.in_line == ref.in_line);
      }
    }
  }
}

// A LineSegment counts the second part of a text without knowing the state at its start; resolved
// with the state the first part ends in, it must give what one pass of the reference gives, for any
// split point, any chunking of either part and either state before the text.
TEST_CASE("a line segment resolved at the boundary agrees with one pass", "[scan]") {
  std::mt19937_64 rng(4242);
  std::vector<std::string> texts = {
      "",
      "abc",
      "   ",
      "\n",
      " \n \n",
      std::string(20'000, 'x'),                          // one line, no line end at all
      std::string(9000, ' ') + "x" + std::string(9000, ' '),
  };
  const std::string alphabet = "ab\n\n\r \t\v";
  for (int round = 0; round < 60; ++round) {
    std::string text(rng() % (round < 40 ? 3000 : 60'000), 'a');
    for (char& ch : text) ch = alphabet[rng() % alphabet.size()];
    texts.push_back(std::move(text));
  }
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string& text = texts[t];
    for (int trial = 0; trial < 8; ++trial) {
      const size_t split = trial == 0 ? 0 : trial == 1 ? text.size() : rng() % (text.size() + 1);
      const bool in_line = trial % 2 == 0;
      LineScanState ref;
      ref.in_line = in_line;
      const uint64_t want = ScanLinesWith(ScanIsa::kScalar, Bytes(text), text.size(), &ref);

      LineScanState state;
      state.in_line = in_line;
      uint64_t got = ScanLines(Bytes(text), split, &state);
      LineSegment segment;
      size_t pos = split;
      while (pos < text.size()) {
        const size_t n = std::min<size_t>(text.size() - pos, 1 + rng() % 5000);
        segment.Feed(Bytes(text) + pos, n);
        pos += n;
      }
      got += segment.Resolve(&state);
      INFO("text " << t << " size " << text.size() << " split " << split << " in_line " << in_line);
      REQUIRE(got == want);
      REQUIRE(state.in_line == ref.in_line);
    }
  }
}

}  // namespace
}  // namespace nereid::lc::dataset
