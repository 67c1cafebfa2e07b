// The soak report's plot, without a graphics library: a PNG encoder (8-bit
// palette; one zlib stream of fixed-Huffman deflate whose only matches are
// runs of a byte and copies of the row above, which is what a plot is made
// of; CRC-32 and Adler-32), a pixel canvas with lines and a 5x7 font, and
// PlotMinutes, which draws the checker's minutes (RSS, descriptors,
// critical sections per minute) as one PNG.
// Thread-safety: plain functions and values; a Canvas is not thread-safe.
#ifndef ZKRECIPES_TESTS_CHAOS_PLOT_H_
#define ZKRECIPES_TESTS_CHAOS_PLOT_H_

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/chaos/checker.h"

namespace zkr {
namespace chaos {

// CRC-32 (ISO-HDLC, as PNG chunks use), continuing from `crc`.
inline uint32_t Crc32(const uint8_t* data, size_t n, uint32_t crc = 0) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// Adler-32, as a zlib stream ends with.
inline uint32_t Adler32(const uint8_t* data, size_t n) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < n; ++i) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

namespace plot_internal {

// Deflate's bit order: values LSB first, Huffman codes MSB first.
class BitWriter {
 public:
  void Bits(uint32_t value, int n) {
    for (int i = 0; i < n; ++i) Bit((value >> i) & 1);
  }
  void Code(uint32_t code, int n) {
    for (int i = n - 1; i >= 0; --i) Bit((code >> i) & 1);
  }
  std::string Finish() {
    if (used_ > 0) out_.push_back(static_cast<char>(current_));
    return std::move(out_);
  }

 private:
  void Bit(uint32_t bit) {
    current_ |= bit << used_;
    if (++used_ == 8) {
      out_.push_back(static_cast<char>(current_));
      current_ = 0;
      used_ = 0;
    }
  }
  std::string out_;
  uint32_t current_ = 0;
  int used_ = 0;
};

// A literal/length symbol in the fixed Huffman code.
inline void Symbol(BitWriter& w, int s) {
  if (s < 144) {
    w.Code(0x30 + s, 8);
  } else if (s < 256) {
    w.Code(0x190 + (s - 144), 9);
  } else if (s < 280) {
    w.Code(s - 256, 7);
  } else {
    w.Code(0xC0 + (s - 280), 8);
  }
}

// A match of `length` (3..258) bytes `distance` (1..32768) back.
inline void Match(BitWriter& w, int length, int distance) {
  static const int kLengthBase[] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                    31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  static const int kLengthExtra[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                     2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  int l = 28;
  while (kLengthBase[l] > length) --l;
  Symbol(w, 257 + l);
  w.Bits(length - kLengthBase[l], kLengthExtra[l]);
  // Distance codes: 0..3 are 1..4; then two codes per power of two, with
  // extra bits growing by one every two codes.
  int code = 0, base = 1, extra = 0;
  for (int c = 0; c < 30; ++c) {
    const int e = c < 4 ? 0 : c / 2 - 1;
    const int b = c < 4 ? c + 1 : (1 << (c / 2)) + 1 + (c % 2) * (1 << (c / 2 - 1));
    if (b > distance) break;
    code = c;
    base = b;
    extra = e;
  }
  w.Code(code, 5);
  w.Bits(distance - base, extra);
}

inline int MatchLength(const std::string& raw, size_t at, size_t distance) {
  if (at < distance) return 0;
  int n = 0;
  while (at + n < raw.size() && n < 258 && raw[at + n] == raw[at + n - distance]) ++n;
  return n;
}

// One fixed-Huffman deflate block of `raw`: each byte a copy of the row
// above (`stride` back) or of the byte before, when 3 or more match, else
// a literal.
inline std::string Deflate(const std::string& raw, size_t stride) {
  BitWriter w;
  w.Bits(1, 1);  // BFINAL
  w.Bits(1, 2);  // BTYPE 01: fixed Huffman codes
  size_t i = 0;
  while (i < raw.size()) {
    const int above = MatchLength(raw, i, stride);
    const int before = MatchLength(raw, i, 1);
    if (std::max(above, before) >= 3) {
      const bool use_above = above >= before;
      const int length = use_above ? above : before;
      Match(w, length, use_above ? static_cast<int>(stride) : 1);
      i += length;
    } else {
      Symbol(w, static_cast<uint8_t>(raw[i]));
      ++i;
    }
  }
  Symbol(w, 256);  // end of block
  return w.Finish();
}

inline void Put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

inline void Chunk(std::string& png, const char* type, const std::string& data) {
  Put32(png, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png += body;
  Put32(png, Crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
}

}  // namespace plot_internal

struct Color {
  uint8_t r = 0, g = 0, b = 0;
};

// A PNG of `width` x `height` pixels, each an index into `palette` (at most
// 256 colours), rows top to bottom.
inline std::string EncodePng(int width, int height, const std::vector<Color>& palette,
                             const std::vector<uint8_t>& pixels) {
  using plot_internal::Put32;
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string header;
  Put32(header, width);
  Put32(header, height);
  header += std::string("\x08\x03\x00\x00\x00", 5);  // 8 bits, palette, deflate, no filter/interlace
  plot_internal::Chunk(png, "IHDR", header);
  std::string colours;
  for (const Color& c : palette) colours += {static_cast<char>(c.r), static_cast<char>(c.g),
                                             static_cast<char>(c.b)};
  plot_internal::Chunk(png, "PLTE", colours);
  // The scanlines: filter type 0 (none), then the row's indices.
  std::string raw;
  for (int y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.append(reinterpret_cast<const char*>(pixels.data()) + static_cast<size_t>(y) * width,
               width);
  }
  std::string zlib = "\x78\x01";  // deflate, 32 KiB window; (0x7801 % 31 == 0)
  zlib += plot_internal::Deflate(raw, static_cast<size_t>(width) + 1);
  Put32(zlib, Adler32(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
  plot_internal::Chunk(png, "IDAT", zlib);
  plot_internal::Chunk(png, "IEND", "");
  return png;
}

// A palette-indexed pixel grid, (0, 0) at the top left.
class Canvas {
 public:
  Canvas(int width, int height, uint8_t background)
      : width_(width), height_(height), pixels_(static_cast<size_t>(width) * height, background) {}

  void Set(int x, int y, uint8_t colour) {
    if (x >= 0 && y >= 0 && x < width_ && y < height_) pixels_[y * width_ + x] = colour;
  }
  // Bresenham's line, both ends included.
  void Line(int x0, int y0, int x1, int y1, uint8_t colour) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
      Set(x0, y0, colour);
      if (x0 == x1 && y0 == y1) return;
      const int e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }
  // `text` in the 5x7 font (digits, capitals, a few signs; lower case drawn
  // as capitals, anything else as a space), its top left at (x, y), 6
  // pixels per character. Returns the x after it.
  int Text(int x, int y, const std::string& text, uint8_t colour) {
    for (char c : text) {
      const uint8_t* rows = Glyph(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
      for (int r = 0; r < 7 && rows != nullptr; ++r) {
        for (int col = 0; col < 5; ++col) {
          if (rows[r] & (0x10 >> col)) Set(x + col, y + r, colour);
        }
      }
      x += 6;
    }
    return x;
  }

  int width() const { return width_; }
  int height() const { return height_; }
  const std::vector<uint8_t>& pixels() const { return pixels_; }

 private:
  static const uint8_t* Glyph(char c) {
    static const struct {
      char c;
      uint8_t rows[7];
    } kFont[] = {
        {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
        {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
        {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
        {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
        {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
        {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
        {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
        {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
        {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
        {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
        {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
        {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
        {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
        {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
        {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
        {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
        {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
        {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
        {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
        {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
        {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
        {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
        {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
        {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
        {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
        {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
        {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
        {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
        {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
        {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
        {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
        {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
        {'Y', {0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04}},
        {'/', {0x01, 0x02, 0x02, 0x04, 0x08, 0x08, 0x10}},
        {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
        {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}},
        {',', {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}},
        {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}},
        {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
        {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    };
    for (const auto& glyph : kFont) {
      if (glyph.c == c) return glyph.rows;
    }
    return nullptr;
  }

  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// One line of a panel: a value per minute (negative: none), its colour
// and its name in the legend.
struct PlotSeries {
  std::string name;
  uint8_t colour = 0;
  std::vector<double> values;
};

namespace plot_internal {

enum : uint8_t { kWhite, kBlack, kGrey, kBlue, kRed, kGreen };

inline std::vector<Color> Palette() {
  return {{255, 255, 255}, {0, 0, 0}, {200, 200, 200}, {30, 80, 200}, {200, 40, 40}, {20, 150, 60}};
}

// A round number at least `v`: 1, 2 or 5 times a power of ten.
inline double NiceCeiling(double v) {
  if (v <= 0) return 1;
  double power = 1;
  while (power * 10 <= v) power *= 10;
  while (power > v) power /= 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= v) return m * power;
  }
  return 10 * power;
}

inline std::string Number(double v) {
  return v >= 10 || v == static_cast<int64_t>(v) ? absl::StrCat(static_cast<int64_t>(v + 0.5))
                                                 : absl::StrCat(static_cast<int64_t>(v * 10) / 10.0);
}

// A panel with its top left at (x, y): title and legend, y axis from 0 with
// ticks at each fifth, x axis in minutes (ticks every 10, or every minute
// under 10 minutes), a line per series.
inline void Panel(Canvas& c, int x, int y, int w, int h, const std::string& title,
                  const std::vector<PlotSeries>& series, int minutes) {
  const int left = x + 50, right = x + w - 10, top = y + 22, bottom = y + h - 18;
  int lx = c.Text(x + 50, y + 4, title, kBlack) + 12;
  for (const PlotSeries& s : series) {
    for (int d = 0; d < 3; ++d) c.Line(lx, y + 7 + d - 1, lx + 14, y + 7 + d - 1, s.colour);
    lx = c.Text(lx + 18, y + 4, s.name, kBlack) + 12;
  }
  double top_value = 0;
  for (const PlotSeries& s : series) {
    for (double v : s.values) top_value = std::max(top_value, v);
  }
  top_value = NiceCeiling(top_value);
  for (int i = 0; i <= 5; ++i) {
    const int ty = bottom - (bottom - top) * i / 5;
    for (int tx = left; tx <= right; tx += 3) c.Set(tx, ty, kGrey);
    const std::string label = Number(top_value * i / 5);
    c.Text(left - 6 - 6 * static_cast<int>(label.size()), ty - 3, label, kBlack);
  }
  const int span = std::max(minutes - 1, 1);
  const int step = minutes <= 10 ? 1 : 10;
  for (int m = 0; m <= span; m += step) {
    const int tx = left + (right - left) * m / span;
    c.Line(tx, bottom, tx, bottom + 3, kBlack);
    const std::string label = absl::StrCat(m);
    c.Text(tx - 3 * static_cast<int>(label.size()), bottom + 6, label, kBlack);
  }
  c.Line(left, top, left, bottom, kBlack);
  c.Line(left, bottom, right, bottom, kBlack);
  for (const PlotSeries& s : series) {
    int px = -1, py = -1;
    for (int m = 0; m < static_cast<int>(s.values.size()); ++m) {
      if (s.values[m] < 0) {
        px = -1;
        continue;
      }
      const int qx = left + (right - left) * m / span;
      const int qy = bottom - static_cast<int>((bottom - top) * s.values[m] / top_value + 0.5);
      if (px >= 0) {
        c.Line(px, py, qx, qy, s.colour);
        c.Line(px, py - 1, qx, qy - 1, s.colour);
      } else {
        c.Set(qx, qy, s.colour);
      }
      px = qx;
      py = qy;
    }
  }
}

}  // namespace plot_internal

// The run per minute as a PNG: RSS (MiB) and the load's live heap, open
// descriptors, and critical sections per minute (the load's locks and
// semaphore; the workers').
inline std::string PlotMinutes(const std::vector<Minute>& minutes) {
  using namespace plot_internal;  // NOLINT: the palette's names
  const int n = static_cast<int>(minutes.size());
  auto series = [&](const std::string& name, uint8_t colour, auto value) {
    PlotSeries s{name, colour, {}};
    for (const Minute& m : minutes) s.values.push_back(value(m));
    return s;
  };
  auto mib = [](int64_t kib) { return kib < 0 ? -1.0 : kib / 1024.0; };
  auto count = [](int64_t v) { return v < 0 ? -1.0 : static_cast<double>(v); };
  const int w = 760, h = 150;
  Canvas c(w, 4 * h, kWhite);
  Panel(c, 0, 0, w, h, "RSS MIB PER MINUTE",
        {series("WORKERS (SUM OF 8)", kBlue, [&](const Minute& m) { return mib(m.worker_rss_kib); }),
         series("LOAD", kRed, [&](const Minute& m) { return mib(m.load_rss_kib); }),
         series("LOAD LIVE HEAP", kGreen, [&](const Minute& m) { return mib(m.load_heap_kib); })},
        n);
  Panel(c, 0, h, w, h, "OPEN DESCRIPTORS",
        {series("WORKERS (SUM OF 8)", kBlue, [&](const Minute& m) { return count(m.worker_fds); }),
         series("LOAD", kRed, [&](const Minute& m) { return count(m.load_fds); })},
        n);
  Panel(c, 0, 2 * h, w, h, "LOAD CRITICAL SECTIONS PER MINUTE",
        {series("LOCKS", kRed, [&](const Minute& m) { return count(m.load_sections); }),
         series("SEMAPHORE", kGreen, [&](const Minute& m) { return count(m.sem_sections); })},
        n);
  Panel(c, 0, 3 * h, w, h, "WORKERS CRITICAL SECTIONS PER MINUTE",
        {series("READ/WRITE LOCK", kBlue,
                [&](const Minute& m) { return count(m.worker_sections); })},
        n);
  return EncodePng(c.width(), c.height(), Palette(), c.pixels());
}

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_PLOT_H_
