// SPDX-License-Identifier: MIT
// Statistics of decoded values, computed in the worker, with the definitions of the CLI's `stats`: min, max,
// mean and std over the finite values (std is the population standard deviation, sums in double
// precision); NaN, +Inf and -Inf counted apart; zeros (+0 and -0) among the finite values; a histogram of
// the finite values in 32 equal bins over [min, max].

export const HISTOGRAM_BINS = 32;
const ABS_BINS = 4096;

/** {count, finite, min, max, mean, std, nan, posInf, negInf, zeros} of a Float32Array. */
export function computeStats(values) {
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    let finite = 0;
    let nan = 0;
    let posInf = 0;
    let negInf = 0;
    let zeros = 0;
    for (let i = 0; i < values.length; ++i) {
        const v = values[i];
        if (v !== v) {
            ++nan;
        } else if (v === Infinity) {
            ++posInf;
        } else if (v === -Infinity) {
            ++negInf;
        } else {
            ++finite;
            sum += v;
            if (v < min) min = v;
            if (v > max) max = v;
            if (v === 0) ++zeros;
        }
    }
    const mean = finite ? sum / finite : NaN;
    let squares = 0;
    if (finite) {
        for (let i = 0; i < values.length; ++i) {
            const v = values[i];
            if (v - v === 0) squares += (v - mean) * (v - mean);
        }
    }
    return {
        count: values.length,
        finite,
        min: finite ? min : NaN,
        max: finite ? max : NaN,
        mean,
        std: finite ? Math.sqrt(squares / finite) : NaN,
        nan,
        posInf,
        negInf,
        zeros,
    };
}

/**
 * Counts of the finite values in `bins` equal bins over [min, max]: bin k holds the values with
 * floor((v - min) * (bins / (max - min))) == k, the maximum goes in the last bin, and a constant tensor has
 * everything in the first. This is the CLI's formula, operation for operation, so the counts agree exactly.
 */
export function histogram(values, min, max, bins = HISTOGRAM_BINS) {
    const counts = new Float64Array(bins);
    if (!(max >= min)) return { min, max, counts };
    const width = max - min;
    const scale = width > 0 ? bins / width : 0;
    for (let i = 0; i < values.length; ++i) {
        const v = values[i];
        if (v - v !== 0) continue;
        const b = Math.trunc((v - min) * scale);
        ++counts[b < bins ? b : bins - 1];
    }
    return { min, max, counts };
}

/**
 * An upper bound of |x| for the fraction `q` of the finite values (from a fine histogram of |x|, exact to
 * 1/4096 of the largest |x|). The heatmap's colour scale uses it so that a few outliers do not wash out
 * the rest.
 */
export function absQuantile(values, maxAbs, q = 0.995) {
    if (!(maxAbs > 0)) return 0;
    const counts = new Float64Array(ABS_BINS);
    const scale = ABS_BINS / maxAbs;
    let n = 0;
    for (let i = 0; i < values.length; ++i) {
        const v = values[i];
        if (v - v !== 0) continue;
        let b = Math.floor(Math.abs(v) * scale);
        if (b >= ABS_BINS) b = ABS_BINS - 1;
        ++counts[b];
        ++n;
    }
    const target = q * n;
    let seen = 0;
    for (let b = 0; b < ABS_BINS; ++b) {
        seen += counts[b];
        if (seen >= target) return ((b + 1) / ABS_BINS) * maxAbs;
    }
    return maxAbs;
}
