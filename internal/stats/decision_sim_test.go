package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"

	"gonum.org/v1/gonum/stat/distuv"
)

// Simulations behind the decisions of issue 12 (seeded; each well under the
// 10 s budget, skipped under -short). Tolerances are derived from the
// simulation error: a rate r measured on R replicates has SE √(r(1−r)/R),
// and each bound allows 3 SE (a 0.3% chance of a false alarm per check).
//
// Figures measured (seeds as in the code; recorded when the tests were
// written; each test's comment has its own table):
//
//	false winners at a true difference of 0 varying by cluster (sd 0.25),
//	4,000 replicates:          clustered (CR1, t on G−1)   case-level score test
//	  10 clusters × 30 cases          4.90%                      36.3%
//	  30 clusters × 10 cases          5.03%                      18.2%
//	McNemar score test size at δ = 0, 20,000 replicates (discordance 0.1 / 0.4):
//	  n = 30: 3.17% / 4.25%   n = 100: 4.28% / 4.93%   n = 500: 4.81% / 5.16%
//	  and Tango's interval excluded 0 exactly when p < 0.05 in every sample.
//	paired t with K = 3 epochs, coverage (pA = 0.50 / 0.85, δ = 0.05):
//	  n = 30: 94.9% / 95.1%   n = 100: 95.2% / 95.2%   n = 500: 94.7% / 95.1%
//	rate intervals: see TestEpochAndClusteredRateCoverage.

// simTol is 3 simulation standard errors of a rate near r over reps draws.
func simTol(r float64, reps int) float64 {
	return 3 * math.Sqrt(r*(1-r)/float64(reps))
}

// clusteredNullData draws G clusters of m cases compared by two targets
// whose true difference is 0 overall but varies by cluster (sd tau): a
// cluster's base rate is uniform on [0.3, 0.8] and A's and B's rates sit
// ±d/2 around it, d ~ N(0, tau²). Cases are independent within a cluster
// given its rates.
func clusteredNullData(rng *rand.Rand, G, m int, tau float64) (a, b []float64, clusters []string, tab PairTable) {
	names := make([]string, G)
	for g := range names {
		names[g] = string(rune('A'+g%26)) + string(rune('a'+g/26))
	}
	clip := func(x float64) float64 { return math.Min(0.98, math.Max(0.02, x)) }
	for g := range G {
		base := 0.3 + 0.5*rng.Float64()
		d := tau * rng.NormFloat64()
		pa, pb := clip(base+d/2), clip(base-d/2)
		for range m {
			x, y := rng.Float64() < pa, rng.Float64() < pb
			a, b = append(a, b2f(x)), append(b, b2f(y))
			clusters = append(clusters, names[g])
			switch {
			case x && y:
				tab.Both++
			case x:
				tab.AOnly++
			case y:
				tab.BOnly++
			default:
				tab.Neither++
			}
		}
	}
	return a, b, clusters, tab
}

func b2f(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// TestClusteredFalseBetter: at a true difference of 0 that varies by
// cluster, the clustered comparison (CR1, t on G−1) declares a winner
// ("a_better" or "b_better" from Verdict at alpha 0.05) at most 5% of the
// time, plus simulation error, with 10 clusters of 30 cases and 30 of 10.
// The case-level score test on the same data, which treats the cases of one
// cluster as independent, declares winners far more often: that inflation
// is why comparisons of clustered cases must use the clustered test.
func TestClusteredFalseBetter(t *testing.T) {
	longtest.Skip(t)
	const reps = 4000
	rng := rand.New(rand.NewPCG(12, 1))
	for _, s := range []struct{ G, m int }{{10, 30}, {30, 10}} {
		clustered, naive := 0, 0
		for range reps {
			a, b, cl, tab := clusteredNullData(rng, s.G, s.m, 0.25)
			p, err := ClusteredPaired(a, b, cl, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if v := Verdict(p.Delta, p.CI, p.PValue, 0.05, DefaultEquivalenceMargin); v == VerdictABetter || v == VerdictBBetter {
				clustered++
			}
			q, _ := PairedBinaryTable(tab, 0.05)
			if v := Verdict(q.Delta, q.CI, q.PValue, 0.05, DefaultEquivalenceMargin); v == VerdictABetter || v == VerdictBBetter {
				naive++
			}
		}
		rc, rn := float64(clustered)/reps, float64(naive)/reps
		t.Logf("%d clusters × %d cases: false winners clustered %.4f, case-level score test %.4f", s.G, s.m, rc, rn)
		if limit := 0.05 + simTol(0.05, reps); rc > limit {
			t.Errorf("%d×%d: clustered comparison declares a winner %.4f of the time at a true difference of 0, want ≤ %.4f", s.G, s.m, rc, limit)
		}
		if rn < 2*rc || rn < 0.10 {
			t.Errorf("%d×%d: the case-level test's false winners %.4f do not show the inflation clustering causes (clustered %.4f)", s.G, s.m, rn, rc)
		}
	}
}

// latentRates draws n per-case success rates with mean p and intra-case
// correlation rho: Beta(p(1−rho)/rho, (1−p)(1−rho)/rho).
func latentRates(src rand.Source, n int, p, rho float64) []float64 {
	beta := distuv.Beta{Alpha: p * (1 - rho) / rho, Beta: (1 - p) * (1 - rho) / rho, Src: src}
	th := make([]float64, n)
	for i := range th {
		th[i] = beta.Rand()
	}
	return th
}

// coverageNeighbourhood is the small neighbourhood of each rate the
// coverage is averaged over (the coverage of any interval for discrete
// data oscillates as p moves; Brown, Cai & DasGupta 2001).
func coverageNeighbourhood(p float64) (lo, hi float64) {
	w := math.Min(0.03, p/2)
	return p - w, math.Min(p+w, 1-w/2)
}

// coverageTol is the slack allowed around the [0.94, 0.965] coverage band:
// 2 simulation standard errors at 95% (0.0069 at 4,000 replicates). The
// seeds are fixed, so this decides once whether a measured coverage is
// distinguishable from the band, not how often the test flakes.
func coverageTol(reps int) float64 {
	return 2 * math.Sqrt(0.95*0.05/float64(reps))
}

// TestEpochAndClusteredRateCoverage: 95% intervals for a pass rate cover
// the true rate 94–96.5% of the time (± coverageTol), averaged over a small
// neighbourhood of p, at n = 30, 100 and 500 cases and p = 0.05, 0.5 and
// 0.9:
//
//   - EpochRateCI: each case runs K = 3 epochs, each epoch passing with the
//     case's latent rate (Beta with intra-case correlation 0.3);
//   - ClusteredMeanCI: the same epochs as members of a cluster per case
//     (G = n clusters of 3 pass/fail values), and one pass/fail value per
//     case with the cases in clusters of 3 (G = 10, 33, 166) sharing a
//     latent rate.
//
// Measured (seed 12,2; 4,000 replicates each; SE of a coverage ≈ 0.0034):
//
//	                         n=30: p≈.05  .5    .9  | n=100: .05  .5    .9  | n=500: .05  .5    .9
//	EpochRateCI                   .966  .955  .946 |       .945 .946  .951 |       .949 .951  .955
//	ClusteredMeanCI (G = n)       .966  .955  .946 |       .945 .946  .951 |       .949 .951  .955
//	ClusteredMeanCI (G = n/3)     .978  .968  .982 |       .963 .951  .947 |       .945 .953  .947
//
// EpochRateCI and ClusteredMeanCI with a cluster per case agree because
// both are Wilson on the design-effect sample size with t(n−1). With 10
// clusters the t(9) quantile makes the interval conservative (up to 98%),
// so that design is held to the lower bound only (and a ceiling of 99%);
// the normal quantile instead would under-cover at 33 clusters (93.8%
// measured at p ≈ 0.9), which is why rates use t on G−1.
func TestEpochAndClusteredRateCoverage(t *testing.T) {
	longtest.Skip(t)
	const (
		reps = 4000
		K    = 3
		rho  = 0.3
	)
	src := rand.NewPCG(12, 2)
	rng := rand.New(src)
	for _, n := range []int{30, 100, 500} {
		for _, p0 := range []float64{0.05, 0.5, 0.9} {
			lo, hi := coverageNeighbourhood(p0)
			var epochCover, flatCover, groupCover int
			means := make([]float64, n)
			flat := make([]float64, n*K)
			flatCl := make([]string, n*K)
			for i := range n {
				for k := range K {
					flatCl[i*K+k] = string(rune(i))
				}
			}
			grp := make([]float64, n)
			grpCl := make([]string, n)
			for i := range grpCl {
				grpCl[i] = string(rune(i / 3))
			}
			for range reps {
				p := lo + (hi-lo)*rng.Float64()
				th := latentRates(src, n, p, rho)
				for i := range n {
					s := 0
					for k := range K {
						ok := rng.Float64() < th[i]
						flat[i*K+k] = b2f(ok)
						if ok {
							s++
						}
					}
					means[i] = float64(s) / K
				}
				if ci, _ := EpochRateCI(means, K, 0.05); ci.Lo <= p && p <= ci.Hi {
					epochCover++
				}
				if _, _, ci, _ := ClusteredMeanCI(flat, flatCl, 0.05); ci.Lo <= p && p <= ci.Hi {
					flatCover++
				}
				gth := latentRates(src, (n+2)/3, p, rho)
				for i := range n {
					grp[i] = b2f(rng.Float64() < gth[i/3])
				}
				if _, _, ci, _ := ClusteredMeanCI(grp, grpCl, 0.05); ci.Lo <= p && p <= ci.Hi {
					groupCover++
				}
			}
			tol := coverageTol(reps)
			for _, c := range []struct {
				name  string
				cover int
				hi    float64
			}{
				{"EpochRateCI", epochCover, 0.965 + tol},
				{"ClusteredMeanCI (epochs as clusters)", flatCover, 0.965 + tol},
				{"ClusteredMeanCI (clusters of 3 cases)", groupCover, clusteredCeiling(n/3, tol)},
			} {
				r := float64(c.cover) / reps
				t.Logf("n=%d p≈%.2f: %s coverage %.4f", n, p0, c.name, r)
				if r < 0.94-tol || r > c.hi {
					t.Errorf("n=%d p≈%.2f: %s covers %.4f, want [%.4f, %.4f]", n, p0, c.name, r, 0.94-tol, c.hi)
				}
			}
		}
	}
}

// clusteredCeiling is the highest coverage accepted for G clusters: the
// band's with 30 or more, 99% below (t on few degrees of freedom is
// conservative by design).
func clusteredCeiling(G int, tol float64) float64 {
	if G < 30 {
		return 0.99
	}
	return 0.965 + tol
}

// TestScoreTestSizeAndAgreement: at a true difference of 0 the McNemar
// score test rejects at most alpha of the time (plus simulation error) at
// n = 30, 100 and 500 and discordance 10% and 40%, and in every sample its
// verdict and Tango's interval agree (the interval excludes 0 exactly when
// p < alpha).
func TestScoreTestSizeAndAgreement(t *testing.T) {
	longtest.Skip(t)
	const reps = 20000
	rng := rand.New(rand.NewPCG(12, 3))
	for _, n := range []int{30, 100, 500} {
		for _, psi := range []float64{0.1, 0.4} {
			rejected := 0
			for range reps {
				var tab PairTable
				for range n {
					u := rng.Float64()
					switch {
					case u < psi/2:
						tab.AOnly++
					case u < psi:
						tab.BOnly++
					case u < psi+(1-psi)/2:
						tab.Both++
					default:
						tab.Neither++
					}
				}
				p, err := PairedBinaryTable(tab, 0.05)
				if err != nil {
					t.Fatal(err)
				}
				rej := p.PValue < 0.05
				if rej {
					rejected++
				}
				if excl := p.CI.Lo > 0 || p.CI.Hi < 0; excl != rej {
					t.Fatalf("%+v: p %v but Tango interval %v", tab, p.PValue, p.CI)
				}
			}
			r := float64(rejected) / reps
			t.Logf("n=%d discordance %.1f: score test size %.4f", n, psi, r)
			if limit := 0.05 + simTol(0.05, reps); r > limit {
				t.Errorf("n=%d discordance %.1f: size %.4f, want ≤ %.4f", n, psi, r, limit)
			}
		}
	}
}

// TestPairedTEpochsCoverage: with epochs, the paired t interval on the
// per-case differences of epoch-averaged pass rates covers the true
// difference 94–96.5% of the time (n = 30, 100, 500; K = 3; A's latent
// rate per case correlated with B's through a shared difficulty).
func TestPairedTEpochsCoverage(t *testing.T) {
	longtest.Skip(t)
	const (
		reps = 4000
		K    = 3
	)
	src := rand.NewPCG(12, 4)
	rng := rand.New(src)
	for _, n := range []int{30, 100, 500} {
		for _, pa := range []float64{0.5, 0.85} {
			pb := pa - 0.05
			a, b := make([]float64, n), make([]float64, n)
			cover := 0
			// The truth is E[clip(pa+h)] − E[clip(pb+h)], by quadrature,
			// not from the data.
			truth := clippedShiftMean(pa, 0.15) - clippedShiftMean(pb, 0.15)
			for range reps {
				for i := range n {
					// A shared difficulty shifts both targets' rates.
					h := 0.15 * rng.NormFloat64()
					ra := math.Min(1, math.Max(0, pa+h))
					rb := math.Min(1, math.Max(0, pb+h))
					sa, sb := 0, 0
					for range K {
						if rng.Float64() < ra {
							sa++
						}
						if rng.Float64() < rb {
							sb++
						}
					}
					a[i], b[i] = float64(sa)/K, float64(sb)/K
				}
				p, _ := PairedMeans(a, b, 0.05)
				if p.CI.Lo <= truth && truth <= p.CI.Hi {
					cover++
				}
			}
			r := float64(cover) / reps
			t.Logf("n=%d pA=%.2f pB=%.2f K=%d: paired t coverage %.4f", n, pa, pb, K, r)
			if tol := coverageTol(reps); r < 0.94-tol || r > 0.965+tol {
				t.Errorf("n=%d pA=%.2f: paired t covers %.4f, want [0.94, 0.965] ± %.4f", n, pa, r, tol)
			}
		}
	}
}

// clippedShiftMean is E[min(1, max(0, p + sd·Z))] for Z standard normal,
// by the trapezoid rule on [−8, 8].
func clippedShiftMean(p, sd float64) float64 {
	const steps = 4000
	sum := 0.0
	for i := 0; i <= steps; i++ {
		z := -8 + 16*float64(i)/steps
		w := 1.0
		if i == 0 || i == steps {
			w = 0.5
		}
		sum += w * math.Min(1, math.Max(0, p+sd*z)) * distuv.UnitNormal.Prob(z)
	}
	return sum * 16 / steps
}
