/* The Matrix Market body check of spla.io.mmio in one pass of C.
 *
 * Before a body goes to SciPy's C++ reader (fast_matrix_market), which reads
 * "1..2" as 1, "1e5e5" as 1e5 and the entry "1 2.7 13" as (1, 2, 0.7)
 * without a word, spla checks that it reads every token whole. This is
 * the same check as the NumPy function mmio._body_well_formed together with
 * the alphabet test before it (tests/io/test_io_native.py holds the two to
 * the same verdict on every input), at under 1 ns a byte instead of ~17:
 *
 *   - lines are split at '\n'; blanks are ' ', '\t', '\r', '\v', '\f';
 *     whitespace at the end of the buffer is ignored;
 *   - every line holds exactly `width` tokens (a blank line inside -> -1);
 *   - the first `index_fields` tokens of a line match  D+  (unsigned);
 *   - every other token matches  [+-]? (D+ (. D*)? | . D+) ([eE] [+-]? D+)?
 *     when `real` is non-zero, else  [+-]? D+ ;
 *   - any other byte (a letter, NUL, non-ASCII) ends up in a token that does
 *     not match.
 *
 * It returns the number of tokens, or -1 at the first violation. The buffer
 * must hold whole lines: a buffer whose last non-blank byte is not followed
 * by a newline is refused (-1). That newline stops every scanning loop, so no
 * loop tests the end of the buffer and no byte past it is ever read.
 *
 * Compiled on first use with the system C compiler by spla/io/native.py.
 */
#include <stdint.h>
#include <string.h>

static inline int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline int is_digit(unsigned char c)
{
    return (unsigned char)(c - '0') < 10;
}

/* The first non-digit at or after p. Eight bytes at a time while a whole word
 * lies before `end8`: a byte is a digit when subtracting '0' does not borrow
 * and adding 0x46 (= 0x80 - ('9' + 1)) does not reach bit 7. A borrow or carry
 * can only mark bytes above the first non-digit, whose own bit is exact, so
 * on a little-endian machine the lowest marked bit points at it: no byte loop,
 * whose exit at a token's variable length is a mispredicted branch (1.4x
 * faster). Elsewhere the byte loop finishes the word; the newline that ends
 * the buffer stops it. */
static inline const unsigned char *skip_digits(const unsigned char *p, const unsigned char *end8)
{
    while (p < end8) {
        uint64_t word, stray;
        memcpy(&word, p, sizeof word);
        stray = ((word - 0x3030303030303030ULL) | (word + 0x4646464646464646ULL)) & 0x8080808080808080ULL;
        if (stray) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + (__builtin_ctzll(stray) >> 3);
#else
            break;
#endif
        }
        p += 8;
    }
    while (is_digit(*p))
        p++;
    return p;
}

int64_t spla_mtx_check(const unsigned char *text, int64_t size, int32_t width, int32_t index_fields,
                       int32_t real)
{
    int64_t last = size - 1, stop, tokens = 0;
    while (last >= 0 && (is_blank(text[last]) || text[last] == '\n'))
        last--;
    if (last < 0)
        return 0;
    stop = last + 1;
    while (stop < size && text[stop] != '\n')
        stop++;
    if (stop == size || width < 1)
        return -1;
    /* text[stop] is the newline that ends the last line; end8 is the last start of a whole word before it */
    const unsigned char *p = text, *end = text + stop, *end8 = stop >= 8 ? end - 8 : text;
    for (;;) {
        int32_t field = 0;
        for (;;) {
            while (is_blank(*p))
                p++;
            if (*p == '\n')
                break;
            if (field == width)
                return -1;
            const unsigned char *start = p;
            if (field < index_fields) {
                p = skip_digits(p, end8);
                if (p == start)
                    return -1;
            } else {
                int64_t digits;
                if (*p == '+' || *p == '-')
                    start = ++p;
                p = skip_digits(p, end8);
                digits = p - start;
                if (real && *p == '.') {
                    start = ++p;
                    p = skip_digits(p, end8);
                    digits += p - start;
                }
                if (!digits)
                    return -1;
                if (real && (*p == 'e' || *p == 'E')) {
                    p++;
                    if (*p == '+' || *p == '-')
                        p++;
                    start = p;
                    p = skip_digits(p, end8);
                    if (p == start)
                        return -1;
                }
            }
            if (!is_blank(*p) && *p != '\n')
                return -1;
            field++;
        }
        if (field != width)
            return -1;
        tokens += width;
        if (p == end)
            return tokens;
        p++;
    }
}
