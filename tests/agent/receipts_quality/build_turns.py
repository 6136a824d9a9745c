"""Build the receipts-quality corpus's turns: each kind of session made for real (a ``Session`` running the
setup code below), each turn's tool calls run by the real capabilities (``capabilities.call``), and what the
receipts would see stored in ``turns.json``: the session picture (as ``agent.question`` wraps it) and each
result as the loop hands it to ``Evidence.add`` (the call as shown, the text the model read, the expression).

Run from the repository: ``.venv/bin/python tests/agent/receipts_quality/build_turns.py`` (``--check``
rebuilds and says whether ``turns.json`` is still what the capabilities return; nothing is written then).
A call that fails stops the build: the corpus holds only results a turn could really have read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TURNS_FILE = HERE / "turns.json"

SETUP: dict[str, str] = {
    "sales": """
import numpy as np, pandas as pd
rng = np.random.default_rng(46)
n = 10_000
sales = pd.DataFrame({
    'date': pd.Timestamp('2024-01-01') + pd.to_timedelta(rng.integers(0, 182, n), unit='D'),
    'region': rng.choice(['north', 'south', 'east', 'west'], n, p=[0.3, 0.25, 0.25, 0.2]),
    'product': rng.choice(['widget', 'gadget', 'gizmo'], n, p=[0.5, 0.3, 0.2]),
    'price': rng.gamma(9, 6.0, n).round(2),
    'qty': rng.integers(1, 9, n),
})
sales.loc[sales.region == 'north', 'price'] += 4.5
sales.loc[sales.date.dt.month == 4, 'qty'] = (sales.loc[sales.date.dt.month == 4, 'qty'] * 0.8).round().clip(1)
sales['revenue'] = (sales.price * sales.qty).round(2)
del rng
""",
    "sensors": """
import numpy as np, pandas as pd
rng = np.random.default_rng(7)
hours = pd.date_range('2024-05-01', periods=24 * 14, freq='h')
frames = []
for i, name in enumerate(['s1', 's2', 's3']):
    daily = 6 * np.sin((hours.hour.to_numpy() - 9) / 24 * 2 * np.pi)
    temp = 21 + 1.5 * i + daily + rng.normal(0, 1.2, len(hours))
    hum = 55 - 2 * i - 0.8 * daily + rng.normal(0, 3, len(hours))
    frames.append(pd.DataFrame({'time': hours, 'sensor': name, 'temp_c': temp.round(2), 'humidity': hum.round(1)}))
readings = pd.concat(frames, ignore_index=True)
readings.loc[700, 'temp_c'] = 41.7
readings.loc[rng.choice(len(readings), 37, replace=False), 'humidity'] = np.nan
threshold = 30.0
del rng, frames, daily, temp, hum, i, name, hours
""",
    "survey": """
import numpy as np, pandas as pd
rng = np.random.default_rng(11)
n = 1250
age = rng.choice(['18-29', '30-44', '45-59', '60+'], n, p=[0.28, 0.32, 0.24, 0.16])
base = {'18-29': 3.3, '30-44': 3.6, '45-59': 3.8, '60+': 4.1}
sat = np.clip(np.round(np.array([base[a] for a in age]) + rng.normal(0, 1.0, n)), 1, 5).astype(int)
survey = pd.DataFrame({
    'age_group': age,
    'satisfaction': sat,
    'recommend': rng.random(n) < (sat - 1) / 5,
    'channel': rng.choice(['email', 'web', 'phone'], n, p=[0.45, 0.4, 0.15]),
    'nps_score': np.clip(sat * 2 + rng.integers(-2, 2, n), 0, 10),
})
del rng, age, base, sat, n
""",
    "timeseries": """
import numpy as np, pandas as pd
rng = np.random.default_rng(5)
days = pd.date_range('2024-01-01', '2024-06-30', freq='D')
trend = np.linspace(1800, 2600, len(days))
weekly = np.where(days.day_of_week >= 5, -450, 120)
dip = np.where(days.month == 4, -520, 0)
visits = pd.Series((trend + weekly + dip + rng.normal(0, 90, len(days))).round().astype(int), index=days, name='visits')
visits['2024-05-17'] = 4120
signups = (visits * rng.uniform(0.018, 0.026, len(days))).round().astype(int).rename('signups')
del rng, days, trend, weekly, dip
""",
    "abtest": """
import pandas as pd
from scipy import stats
ab = pd.DataFrame({'visitors': [24180, 23957], 'conversions': [1139, 1247], 'revenue': [51873.20, 55612.75]},
                  index=pd.Index(['control', 'variant'], name='group'))
rate_control = ab.conversions['control'] / ab.visitors['control']
rate_variant = ab.conversions['variant'] / ab.visitors['variant']
_table = [[ab.conversions[g], ab.visitors[g] - ab.conversions[g]] for g in ab.index]
p_value = float(stats.chi2_contingency(_table)[1])
del _table
""",
    "sql": """
import sqlite3
import numpy as np
rng = np.random.default_rng(21)
con = sqlite3.connect(':memory:', check_same_thread=False)
con.execute('CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, country TEXT)')
names = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'tyrell', 'wonka', 'cyberdyne']
countries = ['DE', 'US', 'US', 'UK', 'US', 'US', 'UK', 'JP', 'DE', 'JP']
con.executemany('INSERT INTO customers VALUES (?, ?, ?)', [(i + 1, n, c) for i, (n, c) in enumerate(zip(names, countries))])
con.execute('CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL, status TEXT, ordered_at TEXT)')
rows = []
for i in range(312):
    day = 1 + int(rng.integers(0, 181))
    date = str(np.datetime64('2024-01-01') + np.timedelta64(day - 1, 'D'))
    status = str(rng.choice(['paid', 'open', 'refunded'], p=[0.78, 0.15, 0.07]))
    rows.append((i + 1, int(rng.integers(1, 11)), float(round(rng.lognormal(5.5, 0.7), 2)), status, date))
con.executemany('INSERT INTO orders VALUES (?, ?, ?, ?, ?)', rows)
con.commit()
del rng, rows, names, countries, i, day, date, status
""",
    "text": """
import numpy as np, pandas as pd
rng = np.random.default_rng(31)
good = ['great product, fast delivery', 'love it, works as described', 'excellent value for the price',
        'arrived early and works perfectly', 'five stars, would buy again']
bad = ['broke after two days, want a refund', 'refund please, it never worked', 'terrible support, still waiting',
       'arrived damaged and late', 'not as described, asking for a refund']
meh = ['ok', 'fine for the price', 'does the job', 'average quality, slow shipping']
texts, ratings = [], []
for _ in range(400):
    kind = rng.choice(['good', 'bad', 'meh'], p=[0.55, 0.2, 0.25])
    pool = {'good': good, 'bad': bad, 'meh': meh}[str(kind)]
    texts.append(str(rng.choice(pool)))
    ratings.append(int({'good': rng.integers(4, 6), 'bad': rng.integers(1, 3), 'meh': 3}[str(kind)]))
reviews = pd.DataFrame({'text': texts, 'rating': ratings, 'product': rng.choice(['kettle', 'toaster', 'blender'], 400)})
del rng, good, bad, meh, texts, ratings, kind, pool, _
""",
    "dask": """
import numpy as np, pandas as pd, dask.dataframe as dd
rng = np.random.default_rng(13)
n = 50_000
_trips = pd.DataFrame({
    'distance_km': rng.gamma(2.2, 2.4, n).round(2),
    'passengers': rng.choice([1, 2, 3, 4], n, p=[0.62, 0.24, 0.09, 0.05]),
    'payment': rng.choice(['card', 'cash', 'app'], n, p=[0.58, 0.17, 0.25]),
})
_trips['fare'] = (3.2 + 1.85 * _trips.distance_km + rng.normal(0, 1.5, n)).clip(3.2).round(2)
trips = dd.from_pandas(_trips, npartitions=8)
del rng, n, _trips
""",
    "polars": """
import numpy as np, polars as pl
rng = np.random.default_rng(17)
days = 365
cities = ['Oslo', 'Bergen', 'Tromso']
base = {'Oslo': 6.3, 'Bergen': 8.1, 'Tromso': 2.9}
rain = {'Oslo': 2.1, 'Bergen': 6.4, 'Tromso': 2.8}
season = 9 * np.sin((np.arange(days) - 110) / 365 * 2 * np.pi)
weather = pl.DataFrame({
    'city': np.repeat(cities, days),
    'day': np.tile(np.arange(1, days + 1), 3),
    'temp': np.concatenate([(base[c] + season + rng.normal(0, 2.5, days)).round(1) for c in cities]),
    'rain_mm': np.concatenate([rng.exponential(rain[c], days).round(1) for c in cities]),
})
del rng, days, cities, base, rain, season
""",
    "figure": """
import numpy as np
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
monthly = {'Jan': 412.5, 'Feb': 398.2, 'Mar': 455.9, 'Apr': 371.4, 'May': 489.0, 'Jun': 512.3}
fig1, ax1 = plt.subplots()
ax1.plot(range(1, 7), list(monthly.values()), marker='o', label='revenue (k$)')
ax1.set_title('Monthly revenue 2024'); ax1.set_xlabel('month'); ax1.set_ylabel('revenue (k$)'); ax1.legend()
channels = {'email': 1240, 'web': 3385, 'phone': 610, 'store': 945}
fig2, ax2 = plt.subplots()
ax2.bar(list(channels), list(channels.values()))
ax2.set_title('Orders by channel'); ax2.set_ylabel('orders')
ages = np.random.default_rng(2).normal(41, 12, 800).round()
fig3, ax3 = plt.subplots()
ax3.hist(ages, bins=16)
ax3.set_title('Customer age'); ax3.set_xlabel('age')
""",
    "finance": """
import pandas as pd
fin = pd.DataFrame({
    'company': ['Northwind', 'Contoso', 'Fabrikam', 'Tailspin', 'Litware', 'Adatum'],
    'revenue_usd': [48.2e9, 31.75e9, 12.4e9, 7.9e9, 2.35e9, 18.6e9],
    'net_income_usd': [5.1e9, 2.9e9, -0.45e9, 0.62e9, 0.18e9, 2.2e9],
    'employees': [152000, 98500, 41200, 23800, 9100, 61400],
    'yoy_growth': [0.062, 0.118, -0.074, 0.031, 0.245, -0.012],
})
""",
}


@dataclass
class Turn:
    """One question of one kind of session and the tool calls its turn made (``[]``: no tool ran)."""

    id: str
    kind: str
    question: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _e(expr: str) -> tuple[str, dict[str, Any]]:
    return ("eval_expr", {"expr": expr})


def _py(code: str) -> tuple[str, dict[str, Any]]:
    return ("run_python", {"code": code})


def _sql(sql: str) -> tuple[str, dict[str, Any]]:
    return ("query_sql", {"connection": "con", "sql": sql})


TURNS: list[Turn] = [
    # -- sales: a pandas frame of 10,000 orders --------------------------------------------------------------
    Turn("sales/rows", "sales", "How many rows does sales have?", [_e("len(sales)")]),
    Turn("sales/mean_price", "sales", "What's the average price?", [_e("sales.price.mean()")]),
    Turn(
        "sales/price_by_region",
        "sales",
        "How does the average price differ by region?",
        [_e("sales.groupby('region').price.mean()"), _e("sales.price.mean()")],
    ),
    Turn("sales/revenue_total", "sales", "What's the total revenue?", [_e("sales.revenue.sum()")]),
    Turn(
        "sales/revenue_by_region",
        "sales",
        "Total revenue per region?",
        [_e("sales.groupby('region').revenue.sum()")],
    ),
    Turn(
        "sales/weighted_price",
        "sales",
        "What's the average price paid per unit, weighted by quantity?",
        [_e("sales.revenue.sum() / sales.qty.sum()"), _e("sales.price.mean()")],
    ),
    Turn(
        "sales/describe",
        "sales",
        "Summarise price, qty and revenue.",
        [_e("sales[['price', 'qty', 'revenue']].describe()")],
    ),
    Turn(
        "sales/monthly",
        "sales",
        "How did revenue change month to month?",
        [
            _e("sales.groupby(sales.date.dt.month).revenue.sum()"),
            _e("sales.groupby(sales.date.dt.month).revenue.sum().pct_change().round(4)"),
        ],
    ),
    Turn(
        "sales/region_share",
        "sales",
        "What share of orders comes from each region?",
        [_e("sales.region.value_counts(normalize=True)")],
    ),
    Turn("sales/session", "sales", "What's in my session?", []),
    Turn(
        "sales/products",
        "sales",
        "Orders and revenue per product?",
        [
            _py(
                "print(sales.groupby('product').agg(orders=('qty', 'size'), revenue=('revenue', 'sum')).round(1))"
            )
        ],
    ),
    # -- sensors: hourly readings of three sensors over two weeks --------------------------------------------
    Turn(
        "sensors/peak",
        "sensors",
        "What was the highest temperature, and when?",
        [_e("readings.temp_c.max()"), _e("readings.loc[readings.temp_c.idxmax()]")],
    ),
    Turn(
        "sensors/by_sensor",
        "sensors",
        "Average temperature and humidity per sensor?",
        [_e("readings.groupby('sensor')[['temp_c', 'humidity']].mean().round(2)")],
    ),
    Turn(
        "sensors/above",
        "sensors",
        "How often was it above the threshold?",
        [_e("(readings.temp_c > threshold).sum()"), _e("(readings.temp_c > threshold).mean()")],
    ),
    Turn(
        "sensors/minmax",
        "sensors",
        "Min and max temperature for each sensor?",
        [_e("readings.groupby('sensor').temp_c.agg(['min', 'max'])")],
    ),
    Turn(
        "sensors/missing",
        "sensors",
        "Any missing values?",
        [_e("readings.isna().sum()"), _e("len(readings)")],
    ),
    Turn(
        "sensors/spread",
        "sensors",
        "How much does the temperature vary?",
        [_e("readings.temp_c.std()"), _e("readings.temp_c.describe()")],
    ),
    Turn(
        "sensors/trend",
        "sensors",
        "Did it get warmer over the two weeks?",
        [
            _py(
                "d = readings.set_index('time').temp_c.resample('D').mean()\nprint(round(d.iloc[0], 2), round(d.iloc[-1], 2))\nprint(round(d.iloc[-1] - d.iloc[0], 2))"
            )
        ],
    ),
    # -- survey: 1,250 answers ----------------------------------------------------------------------------------
    Turn(
        "survey/satisfaction",
        "survey",
        "How are satisfaction scores distributed?",
        [_e("survey.satisfaction.value_counts(normalize=True).sort_index()")],
    ),
    Turn(
        "survey/by_age",
        "survey",
        "Mean satisfaction by age group?",
        [_e("survey.groupby('age_group').satisfaction.mean().round(3)"), _e("survey.satisfaction.mean()")],
    ),
    Turn(
        "survey/recommend",
        "survey",
        "What share would recommend us?",
        [_e("survey.recommend.mean()"), _e("survey.recommend.sum()")],
    ),
    Turn(
        "survey/crosstab",
        "survey",
        "Does recommending depend on age?",
        [_e("pd.crosstab(survey.age_group, survey.recommend, normalize='index').round(3)")],
    ),
    Turn("survey/size", "survey", "How many people answered?", [_e("survey.shape")]),
    Turn(
        "survey/nps",
        "survey",
        "What's our NPS?",
        [
            _py(
                "p = (survey.nps_score >= 9).mean()\nd = (survey.nps_score <= 6).mean()\n"
                "print('promoters', round(p * 100, 1))\nprint('detractors', round(d * 100, 1))\n"
                "print('nps', round((p - d) * 100, 1))"
            )
        ],
    ),
    Turn(
        "survey/channel",
        "survey",
        "How did people answer — which channel?",
        [_e("survey.channel.value_counts()")],
    ),
    # -- time series: daily visits, first half of 2024 ---------------------------------------------------------
    Turn("timeseries/monthly", "timeseries", "Monthly visits?", [_e("visits.resample('MS').sum()")]),
    Turn(
        "timeseries/change",
        "timeseries",
        "How did visits change month over month?",
        [_e("visits.resample('MS').sum().pct_change().round(4)")],
    ),
    Turn(
        "timeseries/peak", "timeseries", "When did visits peak?", [_e("visits.idxmax()"), _e("visits.max()")]
    ),
    Turn(
        "timeseries/mean", "timeseries", "Average daily visits?", [_e("visits.mean()"), _e("visits.median()")]
    ),
    Turn(
        "timeseries/weeks",
        "timeseries",
        "Compare the last week with the week before.",
        [
            _py(
                "a = visits.iloc[-7:].sum()\nb = visits.iloc[-14:-7].sum()\nprint(a, b, round((a - b) / b * 100, 2))"
            )
        ],
    ),
    Turn(
        "timeseries/signup_rate",
        "timeseries",
        "What's the signup rate?",
        [_e("signups.sum() / visits.sum()"), _e("signups.sum()")],
    ),
    Turn(
        "timeseries/low",
        "timeseries",
        "What was the quietest day?",
        [_e("visits.idxmin()"), _e("visits.min()")],
    ),
    # -- A/B test ------------------------------------------------------------------------------------------------
    Turn("abtest/table", "abtest", "Show me the test results.", [_e("ab")]),
    Turn(
        "abtest/rates",
        "abtest",
        "Conversion rate per group?",
        [_e("rate_control"), _e("rate_variant")],
    ),
    Turn(
        "abtest/lift",
        "abtest",
        "What's the lift?",
        [_e("rate_variant - rate_control"), _e("rate_variant / rate_control - 1")],
    ),
    Turn(
        "abtest/significance",
        "abtest",
        "Is it significant?",
        [_e("p_value"), _e("ab.conversions / ab.visitors")],
    ),
    Turn(
        "abtest/rpv",
        "abtest",
        "Revenue per visitor?",
        [_e("(ab.revenue / ab.visitors).round(4)")],
    ),
    Turn("abtest/session", "abtest", "What do I have loaded?", []),
    # -- SQL tables in SQLite -------------------------------------------------------------------------------------
    Turn(
        "sql/status",
        "sql",
        "Orders by status?",
        [
            _sql(
                "SELECT status, COUNT(*) AS n, ROUND(SUM(amount), 2) AS total FROM orders GROUP BY status ORDER BY n DESC"
            )
        ],
    ),
    Turn(
        "sql/top_customers",
        "sql",
        "Top 5 customers by revenue?",
        [
            _sql(
                "SELECT c.name, COUNT(*) AS orders, ROUND(SUM(o.amount), 2) AS revenue FROM orders o "
                "JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid' GROUP BY c.name "
                "ORDER BY revenue DESC LIMIT 5"
            )
        ],
    ),
    Turn(
        "sql/average",
        "sql",
        "What's the average order?",
        [
            _sql(
                "SELECT ROUND(AVG(amount), 2) AS avg_amount, COUNT(*) AS orders, ROUND(MAX(amount), 2) AS largest FROM orders"
            )
        ],
    ),
    Turn(
        "sql/country",
        "sql",
        "Revenue by country?",
        [
            _sql(
                "SELECT c.country, ROUND(SUM(o.amount), 2) AS revenue, COUNT(DISTINCT c.id) AS customers "
                "FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY revenue DESC"
            )
        ],
    ),
    Turn(
        "sql/monthly",
        "sql",
        "Monthly order totals?",
        [
            _sql(
                "SELECT strftime('%Y-%m', ordered_at) AS month, COUNT(*) AS orders, ROUND(SUM(amount), 2) AS total "
                "FROM orders GROUP BY month ORDER BY month"
            )
        ],
    ),
    Turn(
        "sql/refunds",
        "sql",
        "What share of orders were refunded?",
        [
            _sql(
                "SELECT ROUND(100.0 * SUM(status = 'refunded') / COUNT(*), 2) AS refunded_pct, "
                "SUM(status = 'refunded') AS refunded FROM orders"
            )
        ],
    ),
    # -- text columns: 400 reviews --------------------------------------------------------------------------------
    Turn(
        "text/length",
        "text",
        "How long are the reviews?",
        [_e("reviews.text.str.len().mean()"), _e("reviews.text.str.split().str.len().describe()")],
    ),
    Turn(
        "text/refund",
        "text",
        "How many reviews mention a refund?",
        [_e("reviews.text.str.contains('refund').sum()"), _e("reviews.text.str.contains('refund').mean()")],
    ),
    Turn("text/ratings", "text", "Rating distribution?", [_e("reviews.rating.value_counts().sort_index()")]),
    Turn(
        "text/words",
        "text",
        "Most common words?",
        [
            _py(
                "from collections import Counter\n"
                "c = Counter(w.strip(',') for t in reviews.text for w in t.split())\n"
                "for w, k in c.most_common(6):\n    print(w, k)"
            )
        ],
    ),
    Turn(
        "text/by_product",
        "text",
        "Average rating per product?",
        [_e("reviews.groupby('product').rating.mean().round(2)")],
    ),
    Turn(
        "text/unique",
        "text",
        "How many distinct review texts are there?",
        [_e("reviews.text.nunique()"), _e("len(reviews)")],
    ),
    # -- a Dask frame of 50,000 taxi trips (8 partitions, lazy) -------------------------------------------------------
    Turn("dask/fare", "dask", "Average fare?", [_py("print(round(trips.fare.mean().compute(), 3))")]),
    Turn("dask/partitions", "dask", "How is trips partitioned?", [_e("trips.npartitions")]),
    Turn(
        "dask/payment",
        "dask",
        "Average fare by payment type?",
        [_py("print(trips.groupby('payment').fare.mean().compute().round(2).sort_index())")],
    ),
    Turn(
        "dask/distance",
        "dask",
        "Total distance and number of trips?",
        [_py("print(round(trips.distance_km.sum().compute(), 1))\nprint(len(trips))")],
    ),
    Turn("dask/rows", "dask", "How many rows does trips have?", []),
    Turn(
        "dask/passengers",
        "dask",
        "How many passengers per trip?",
        [
            _py(
                "print(trips.groupby('passengers').size().compute().sort_index())\nprint(round(trips.passengers.mean().compute(), 3))"
            )
        ],
    ),
    # -- a polars frame: a year of weather in three cities -----------------------------------------------------------
    Turn("polars/shape", "polars", "How big is weather?", [_e("weather.shape")]),
    Turn("polars/mean_temp", "polars", "Mean temperature overall?", [_e("weather['temp'].mean()")]),
    Turn(
        "polars/by_city",
        "polars",
        "Mean temperature and rain per city?",
        [_py("print(weather.select(['city', 'temp', 'rain_mm']).group_by('city').mean().sort('city'))")],
    ),
    Turn("polars/rain_total", "polars", "How much rain fell in total?", [_e("weather['rain_mm'].sum()")]),
    Turn(
        "polars/extremes",
        "polars",
        "Coldest and warmest readings?",
        [_e("weather['temp'].min()"), _e("weather['temp'].max()")],
    ),
    Turn("polars/describe", "polars", "Describe weather.", [_e("weather.describe()")]),
    # -- finance: six companies, in dollars -----------------------------------------------------------------------------
    Turn("finance/total", "finance", "Combined revenue of the six companies?", [_e("fin.revenue_usd.sum()")]),
    Turn(
        "finance/ranking",
        "finance",
        "Rank the companies by revenue.",
        [_e("fin.set_index('company').revenue_usd.sort_values(ascending=False)")],
    ),
    Turn(
        "finance/growth", "finance", "Who grew and who shrank?", [_e("fin.set_index('company').yoy_growth")]
    ),
    Turn(
        "finance/margin",
        "finance",
        "Net margin per company?",
        [_e("(fin.set_index('company').net_income_usd / fin.set_index('company').revenue_usd).round(4)")],
    ),
    Turn(
        "finance/employees",
        "finance",
        "How many employees in total?",
        [_e("fin.employees.sum()"), _e("fin.employees.mean()")],
    ),
    Turn(
        "finance/table",
        "finance",
        "Give me a table of revenue and growth.",
        [_e("fin[['company', 'revenue_usd', 'yoy_growth']]")],
    ),
    Turn("finance/session", "finance", "What data do I have?", []),
    # -- figures (matplotlib; last: pyplot's open figures are the process's, every later picture would list them)
    # -----------------------------------------------------------------------------------------
    Turn("figure/all", "figure", "What do my figures show?", [("get_figure", {})]),
    Turn(
        "figure/revenue",
        "figure",
        "Describe the revenue chart.",
        [("get_figure", {"figure": "1"}), _e("monthly")],
    ),
    Turn(
        "figure/channels",
        "figure",
        "What does the channel chart say?",
        [("get_figure", {"figure": "2"}), _e("channels")],
    ),
    Turn(
        "figure/ages",
        "figure",
        "What does the age histogram show?",
        [("get_figure", {"figure": "3"}), _e("ages.mean()"), _e("len(ages)")],
    ),
]


def build(only: str | None = None) -> dict[str, Any]:
    """Every turn of ``TURNS`` run for real: ``{turn id: {kind, question, picture, results}}``."""
    sys.path.insert(0, str(HERE.parents[2] / "src"))
    from pyaichat.agent.calls import arg_summary
    from pyaichat.capabilities import call
    from pyaichat.configuration.config import Config
    from pyaichat.runtime.local import LocalRuntime
    from pyaichat.session import Session
    from pyaichat.untrusted import span

    sessions: dict[str, Session] = {}
    out: dict[str, Any] = {}
    for turn in TURNS:
        if only and not turn.id.startswith(only):
            continue
        if turn.kind not in sessions:
            session = Session(echo=lambda value: None)
            session.settings.replace(Config(audit=False, tool_timeout=30.0))  # a loaded machine is no failure
            ran = session.run(SETUP[turn.kind].strip())
            if not ran.ok:
                raise SystemExit(f"setup of {turn.kind} failed: {ran.error}")
            sessions[turn.kind] = session
        session = sessions[turn.kind]
        # as ``agent.question`` gives it to the turn (no pinned names, nothing said since the last answer)
        picture = span(LocalRuntime(session).picture())
        results = []
        for name, args in turn.calls:
            got = call(session, name, args)
            if not got.ok:
                raise SystemExit(f"{turn.id}: {name}({args}) failed: {got.error}")
            expr = args.get("expr") if name == "eval_expr" else None
            results.append(
                {"call": f"{name}({arg_summary(args)})", "text": got.text, "expr": str(expr or "")}
            )
        out[turn.id] = {
            "kind": turn.kind,
            "question": turn.question,
            "calls": [[name, args] for name, args in turn.calls],
            "picture": picture,
            "results": results,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="rebuild and compare with turns.json; write nothing"
    )
    parser.add_argument(
        "--only", help="build only the turns whose id starts with this (printed, not written)"
    )
    args = parser.parse_args()
    built = build(args.only)
    if args.only:
        for tid, turn in built.items():
            print(f"### {tid}: {turn['question']}\n{turn['picture']}")
            for r in turn["results"]:
                print(f"--- {r['call']}\n{r['text']}")
        return
    text = json.dumps(built, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        same = TURNS_FILE.exists() and TURNS_FILE.read_text() == text
        print("turns.json is what the capabilities return" if same else "turns.json differs from a rebuild")
        raise SystemExit(0 if same else 1)
    TURNS_FILE.write_text(text)
    print(f"{len(built)} turns written to {TURNS_FILE}")


if __name__ == "__main__":
    main()
