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
 * by a newline is refused (-1). No byte outside the buffer is ever read.
 *
 * Two ways, the same verdicts: 64 bytes at a time as SSE2 bit masks
 * (check_blocks, x86-64 with GCC or Clang) and token by token (check_tokens,
 * elsewhere, or with -DSPLA_MTX_CHECK_SCALAR, which the tests also build).
 *
 * Compiled on first use with the system C compiler by spla/io/native.py.
 */
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && defined(__GNUC__) && !defined(SPLA_MTX_CHECK_SCALAR)
#include <emmintrin.h>
#define SPLA_MTX_CHECK_BLOCKS 1
#endif

static inline int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline int is_digit(unsigned char c)
{
    return (unsigned char)(c - '0') < 10;
}

#ifndef SPLA_MTX_CHECK_BLOCKS
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

/* Token by token. text[stop] is the newline that ends the last line; it stops
 * every scanning loop, so no loop tests the end of the buffer. */
static int64_t check_tokens(const unsigned char *text, int64_t stop, int32_t width, int32_t index_fields,
                            int32_t real)
{
    int64_t tokens = 0;
    /* end8: the last start of a whole word before the final newline */
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
#endif

#ifdef SPLA_MTX_CHECK_BLOCKS
/* 64 bytes at a time as bit masks (bit i = byte i), the rules as bit operations.
 *
 * Every rule on a byte's neighbours is written as a rule on a byte and the
 * one (or two) before it: prev(X) is X shifted up one bit, with the last bit
 * of the previous block shifted in, so a block never needs the next one. The
 * rules that span a token (one dot, one exponent, the dot first) mark what
 * follows a dot or an exponent letter up to the token's end with one
 * addition: T + s carries from each bit of s to the end of its run of token
 * bytes T, so ((T + s) ^ T) & T covers it; the carry continues into the next
 * block. Lines are then walked by their newline bits: each must hold `width`
 * token starts, with no sign, dot or exponent before the start of token
 * index_fields + 1. About 0.3 ns a byte against 0.9 token by token. */
struct masks {
    uint64_t digit, blank, newline, sign, dot, exp, other;
};

static inline uint64_t bits(__m128i v, int shift)
{
    return (uint64_t)(uint16_t)_mm_movemask_epi8(v) << shift;
}

/* unsigned x <= limit, byte by byte */
static inline __m128i at_most(__m128i x, char limit)
{
    return _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(limit)), x);
}

static inline void classify(const unsigned char *p, int32_t real, struct masks *m)
{
    memset(m, 0, sizeof *m);
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        __m128i newline = _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'));
        /* '\t' '\n' '\v' '\f' '\r' are 9-13 */
        __m128i control = _mm_andnot_si128(newline, at_most(_mm_sub_epi8(x, _mm_set1_epi8(9)), 4));
        __m128i blank = _mm_or_si128(control, _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
        __m128i digit = at_most(_mm_sub_epi8(x, _mm_set1_epi8('0')), 9);
        __m128i sign = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('+')), _mm_cmpeq_epi8(x, _mm_set1_epi8('-')));
        __m128i known = _mm_or_si128(_mm_or_si128(newline, blank), _mm_or_si128(digit, sign));
        m->newline |= bits(newline, 16 * k);
        m->blank |= bits(blank, 16 * k);
        m->digit |= bits(digit, 16 * k);
        m->sign |= bits(sign, 16 * k);
        if (real) {
            __m128i dot = _mm_cmpeq_epi8(x, _mm_set1_epi8('.'));
            __m128i exp = _mm_cmpeq_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)), _mm_set1_epi8('e'));
            known = _mm_or_si128(known, _mm_or_si128(dot, exp));
            m->dot |= bits(dot, 16 * k);
            m->exp |= bits(exp, 16 * k);
        }
        m->other |= bits(_mm_cmpeq_epi8(known, _mm_setzero_si128()), 16 * k);
    }
}

/* ((T + s) ^ T) & T with a carry in and out: from each bit of s to the end of its run in T */
static inline uint64_t to_token_end(uint64_t token, uint64_t start, uint64_t *carry)
{
    uint64_t sum = token + start, total = sum + *carry;
    *carry = (sum < token) | (total < sum);
    return (total ^ token) & token;
}

static int64_t check_blocks(const unsigned char *text, int64_t length, int32_t width, int32_t index_fields,
                            int32_t real)
{
    /* the bits shifted in from the previous block: before the text comes a line end */
    uint64_t in_space = 1, in_digit = 0, in_digit2 = 0, in_sign = 0, in_dot = 0, in_exp = 0, in_exp_sign = 0,
             in_bare_dot = 0, carry_dot = 0, carry_exp = 0;
    int64_t lines = 0, count = 0; /* lines done; token starts in the line being read */
    unsigned char tail[64];
    for (int64_t at = 0; at < length; at += 64) {
        const unsigned char *block = text + at;
        if (length - at < 64) { /* the last block, padded with blanks (no tokens, no line) */
            memset(tail, ' ', sizeof tail);
            memcpy(tail, block, (size_t)(length - at));
            block = tail;
        }
        struct masks m;
        classify(block, real, &m);
        if (m.other)
            return -1;
        uint64_t space = m.blank | m.newline, D = m.digit, S = m.sign, P = m.dot, E = m.exp;
        uint64_t token = D | S | P | E;
        uint64_t pZ = space << 1 | in_space, pD = D << 1 | in_digit, p2D = D << 2 | in_digit2;
        uint64_t pS = S << 1 | in_sign, pP = P << 1 | in_dot, pE = E << 1 | in_exp;
        uint64_t exp_sign = S & pE, bare_dot = P & ~pD;
        uint64_t pES = exp_sign << 1 | in_exp_sign, pBD = bare_dot << 1 | in_bare_dot;
        uint64_t bad =
            (S & ~(pZ | pE))          /* a sign opens the token or follows the exponent letter */
            | (pS & ~(D | P))         /* and a digit (or a mantissa's dot) follows it */
            | (pES & ~D)              /* a digit follows an exponent's sign */
            | (P & ~(pZ | pD | pS))   /* a dot follows a blank, a digit or a sign */
            | (pP & ~(D | space | E)) /* and a digit, a blank or the exponent follows it */
            | (E & pP & ~p2D)         /* "D.e" but not ".e" */
            | (pBD & ~D)              /* a dot with no digit before has one after */
            | (E & ~(pD | pP))        /* the exponent letter follows the mantissa */
            | (pE & ~(D | S));        /* and a digit or a sign follows it */
        if (bad)
            return -1;
        if ((P & to_token_end(token, pP & token, &carry_dot))
            || ((P | E) & to_token_end(token, pE & token, &carry_exp)))
            return -1; /* a second dot, or a dot or exponent after the exponent */
        in_space = space >> 63, in_digit = D >> 63, in_digit2 = D >> 62, in_sign = S >> 63, in_dot = P >> 63;
        in_exp = E >> 63, in_exp_sign = exp_sign >> 63, in_bare_dot = bare_dot >> 63;

        uint64_t starts = token & pZ, marks = S | P | E, ends = m.newline, from = ~(uint64_t)0;
        for (;;) {
            uint64_t line = from, newline = ends & -ends;
            if (newline)
                line &= (newline << 1) - 1; /* (a newline at bit 63 keeps every bit) */
            uint64_t here = starts & line;
            /* this line's bits before the start of its first non-index token must hold no marks */
            int64_t need = index_fields + 1 - count;
            if (index_fields && need >= 1) {
                uint64_t rest = here;
                for (int64_t k = 1; k < need && rest; k++)
                    rest &= rest - 1;
                if (marks & (rest ? line & ((rest & -rest) - 1) : line))
                    return -1;
            }
            count += __builtin_popcountll(here);
            if (!newline)
                break;
            if (count != width)
                return -1;
            count = 0;
            lines++;
            from = ~((newline << 1) - 1);
            ends &= ends - 1;
        }
    }
    return lines * width;
}
#endif

int64_t spla_mtx_check(const unsigned char *text, int64_t size, int32_t width, int32_t index_fields,
                       int32_t real)
{
    int64_t last = size - 1, stop;
    while (last >= 0 && (is_blank(text[last]) || text[last] == '\n'))
        last--;
    if (last < 0)
        return 0;
    stop = last + 1;
    while (stop < size && text[stop] != '\n')
        stop++;
    if (stop == size || width < 1)
        return -1;
#ifdef SPLA_MTX_CHECK_BLOCKS
    return check_blocks(text, stop + 1, width, index_fields, real);
#else
    return check_tokens(text, stop, width, index_fields, real);
#endif
}
