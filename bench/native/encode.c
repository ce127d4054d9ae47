// Native libjpeg-turbo encode with the settings zarr-jpeg's writer uses, for a like-for-like
// ceiling: tjbench (TurboJPEG 2.1) cannot turn on optimised Huffman tables or write an RGB
// (Adobe transform 0) stream, and zarr-jpeg always writes optimised tables.
//
//   encode <image.ppm|image.pgm> <420|444|gray|rgb> <quality> <optimize 0|1> <seconds> <warm-up seconds>
//
// Compresses the image in memory into one buffer allocated before timing (as tjbench does),
// with one reused compress object, the accurate integer DCT, and 2×2 or 1×1 luma sampling;
// prints "<MP/s> <compressed bytes>".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jpeglib.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fail(const char *what) {
  fprintf(stderr, "encode: %s\n", what);
  exit(1);
}

// Binary PPM (P6) or PGM (P5), maxval 255.
static unsigned char *read_netpbm(const char *file, int *w, int *h, int *comps) {
  FILE *f = fopen(file, "rb");
  if (!f) fail("cannot open the image");
  char magic[3] = {0};
  int maxval;
  if (fscanf(f, "%2s %d %d %d", magic, w, h, &maxval) != 4 || maxval != 255) fail("not a binary PPM/PGM with maxval 255");
  if (strcmp(magic, "P6") == 0) *comps = 3;
  else if (strcmp(magic, "P5") == 0) *comps = 1;
  else fail("not P5 or P6");
  fgetc(f); // the single whitespace after maxval
  size_t n = (size_t)*w * (size_t)*h * (size_t)*comps;
  unsigned char *px = malloc(n);
  if (!px || fread(px, 1, n, f) != n) fail("short image data");
  fclose(f);
  return px;
}

int main(int argc, char **argv) {
  if (argc != 7) fail("usage: encode <image.ppm|pgm> <420|444|gray|rgb> <quality> <optimize 0|1> <seconds> <warm-up seconds>");
  int w, h, comps;
  unsigned char *px = read_netpbm(argv[1], &w, &h, &comps);
  const char *mode = argv[2];
  int quality = atoi(argv[3]), optimize = atoi(argv[4]);
  double seconds = atof(argv[5]), warmup = atof(argv[6]);
  int gray = strcmp(mode, "gray") == 0, rgb = strcmp(mode, "rgb") == 0, s420 = strcmp(mode, "420") == 0;
  if (gray != (comps == 1)) fail("gray mode needs a PGM, the others a PPM");

  JSAMPROW *rows = malloc(sizeof(JSAMPROW) * (size_t)h);
  for (int y = 0; y < h; y++) rows[y] = px + (size_t)y * (size_t)w * (size_t)comps;
  unsigned long capacity = (unsigned long)w * (unsigned long)h * (unsigned long)comps * 2 + 65536;
  unsigned char *out = malloc(capacity);
  if (!rows || !out) fail("out of memory");

  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned long bytes = 0;
  double t0 = now(), start = 0;
  long timed = 0;
  for (;;) {
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = comps;
    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    if (rgb) jpeg_set_colorspace(&c, JCS_RGB); // Adobe marker, transform 0
    jpeg_set_quality(&c, quality, TRUE);
    if (!gray && !rgb) {
      c.comp_info[0].h_samp_factor = c.comp_info[0].v_samp_factor = s420 ? 2 : 1;
      for (int k = 1; k < 3; k++) c.comp_info[k].h_samp_factor = c.comp_info[k].v_samp_factor = 1;
    }
    c.optimize_coding = optimize ? TRUE : FALSE;
    c.dct_method = JDCT_ISLOW;
    unsigned char *buf = out;
    unsigned long size = capacity;
    jpeg_mem_dest(&c, &buf, &size);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height)
      jpeg_write_scanlines(&c, rows + c.next_scanline, c.image_height - c.next_scanline);
    jpeg_finish_compress(&c);
    if (buf != out) fail("output buffer too small");
    bytes = size;
    double t = now();
    if (start == 0) {
      if (t - t0 >= warmup) start = t;
    } else {
      timed++;
      if (t - start >= seconds) {
        printf("%.2f %lu\n", (double)timed * w * h / (t - start) / 1e6, bytes);
        break;
      }
    }
  }
  jpeg_destroy_compress(&c);
  return 0;
}
