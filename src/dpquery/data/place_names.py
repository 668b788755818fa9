"""Public vocabularies of place names: the US states and the countries of the world.

Public knowledge written here, not read from any table: the 50 states, the District of
Columbia and the territories of the United States (with their USPS codes in
:data:`dpquery.domain_learning.VOCABULARIES`), and the English short names of ISO 3166-1
with the common alternative spellings of each (the short form in use, "South Korea" beside
"Korea, Republic of"; English abbreviations written with and without points, "USA" and
"U.S.A."; former names still common in historical tables, "Zaire", "Burma", "Swaziland",
and the states dissolved since 1990, "USSR", "Yugoslavia", "Czechoslovakia", "West
Germany"), and the four countries of the United Kingdom, "England", "Scotland", "Wales" and
"Northern Ireland" (ISO 3166-2:GB; census tables write them as countries of birth). Each
slot is one place with its spellings, ``|``-separated (a line starting with ``+``
continues the slot above); the first is the one written as the place's name. The names of
the UN's M49 list, of ISO 3166-1's list form and of the World Bank's are among each place's
spellings, labelled by style in :data:`COUNTRY_STYLES` (a column written in one of them is
released in it: :mod:`dpquery.algorithms.marginal.spelling_style`).

Last, the country codes of ISO 3166-1 (alpha-2 and alpha-3, with Kosovo's user-assigned
``XK`` and ``XKX``), one code a slot, written in capitals.

:func:`dpquery.domain_learning.membership_classes` counts a column's values in each of these
(and the older vocabularies) by writing case, for a private membership test.
"""

from __future__ import annotations

_STATES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|"
    "Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|"
    "Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|"
    "New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|"
    "Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|"
    "Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming"
)
US_STATE_NAMES: tuple[tuple[str, ...], ...] = (
    *((s,) for s in _STATES.split("|")),
    ("District of Columbia", "Washington DC", "Washington D.C.", "DC", "D.C."),
    ("Puerto Rico",),
    ("Guam",),
    ("U.S. Virgin Islands", "US Virgin Islands", "Virgin Islands"),
    ("American Samoa",),
    ("Northern Mariana Islands",),
    ("Federated States of Micronesia", "Micronesia"),
    ("Marshall Islands",),
    ("Palau",),
)
"""The 50 states, DC and the 8 territories and freely associated states of the USPS codes."""

# ISO 3166-1 English short names (249 entries), one line a slot, alternatives after "|"
_COUNTRIES = """
Afghanistan
Åland Islands|Aland Islands
Albania
Algeria
American Samoa
Andorra
Angola
Anguilla
Antarctica
Antigua and Barbuda|Antigua & Barbuda
Argentina
Armenia
Aruba
Australia
Austria
Azerbaijan
Bahamas|The Bahamas|Bahamas, The
Bahrain
Bangladesh
Barbados
Belarus|Byelorussia
Belgium
Belize
Benin|Dahomey
Bermuda
Bhutan
Bolivia|Bolivia (Plurinational State of)|Bolivia, Plurinational State of
Bonaire, Sint Eustatius and Saba|Caribbean Netherlands
Bosnia and Herzegovina|Bosnia & Herzegovina|Bosnia-Herzegovina
Botswana
Bouvet Island
Brazil
British Indian Ocean Territory
Brunei|Brunei Darussalam
Bulgaria
Burkina Faso|Upper Volta
Burundi
Cabo Verde|Cape Verde
Cambodia|Kampuchea
Cameroon
Canada
Cayman Islands
Central African Republic
Chad
Chile
China|People's Republic of China|PRC
Christmas Island
Cocos (Keeling) Islands|Cocos Islands
Colombia
Comoros
Congo|Republic of the Congo|Congo-Brazzaville|Congo, Rep.
Democratic Republic of the Congo|DR Congo|DRC|Congo-Kinshasa|Congo, Dem. Rep.|Zaire
+Congo, The Democratic Republic of the
Cook Islands
Costa Rica
Côte d'Ivoire|Cote d'Ivoire|Ivory Coast
Croatia
Cuba
Curaçao|Curacao
Cyprus
Czechia|Czech Republic
Denmark
Djibouti
Dominica
Dominican Republic
Ecuador
Egypt|Egypt, Arab Rep.
El Salvador
Equatorial Guinea
Eritrea
Estonia
Eswatini|Swaziland
Ethiopia
Falkland Islands|Falkland Islands (Malvinas)
Faroe Islands
Fiji
Finland
France
French Guiana
French Polynesia
French Southern Territories
Gabon
Gambia|The Gambia|Gambia, The
Georgia
Germany
Ghana
Gibraltar
Greece
Greenland
Grenada
Guadeloupe
Guam
Guatemala
Guernsey
Guinea
Guinea-Bissau
Guyana
Haiti
Heard Island and McDonald Islands
Holy See|Vatican City|Vatican|Holy See (Vatican City State)
Honduras
Hong Kong|China, Hong Kong Special Administrative Region|Hong Kong SAR, China
Hungary
Iceland
India
Indonesia
Iran|Iran (Islamic Republic of)|Iran, Islamic Rep.|Iran, Islamic Republic of
Iraq
Ireland
Isle of Man
Israel
Italy
Jamaica
Japan
Jersey
Jordan
Kazakhstan
Kenya
Kiribati
North Korea|Korea (Democratic People's Republic of)|Korea, Dem. People's Rep.|DPRK
+Democratic People's Republic of Korea|Korea, Democratic People's Republic of
South Korea|Korea, Republic of|Republic of Korea|Korea (Republic of)|Korea, Rep.|Korea
Kuwait
Kyrgyzstan|Kyrgyz Republic
Laos|Lao People's Democratic Republic|Lao PDR
Latvia
Lebanon
Lesotho
Liberia
Libya
Liechtenstein
Lithuania
Luxembourg
Macao|Macau|China, Macao Special Administrative Region|Macao SAR, China
Madagascar
Malawi
Malaysia
Maldives
Mali
Malta
Marshall Islands
Martinique
Mauritania
Mauritius
Mayotte
Mexico
Micronesia|Micronesia (Federated States of)|Federated States of Micronesia
+Micronesia, Federated States of|Micronesia, Fed. Sts.
Moldova|Moldova, Republic of|Republic of Moldova
Monaco
Mongolia
Montenegro
Montserrat
Morocco
Mozambique
Myanmar|Burma
Namibia
Nauru
Nepal
Netherlands|The Netherlands|Holland
New Caledonia
New Zealand
Nicaragua
Niger
Nigeria
Niue
Norfolk Island
North Macedonia|Macedonia
Northern Mariana Islands
Norway
Oman
Pakistan
Palau
Palestine|Palestine, State of|State of Palestine|West Bank and Gaza
Panama
Papua New Guinea
Paraguay
Peru
Philippines
Pitcairn|Pitcairn Islands
Poland
Portugal
Puerto Rico
Qatar
Réunion|Reunion
Romania
Russia|Russian Federation
Rwanda
Saint Barthélemy|Saint Barthelemy
Saint Helena, Ascension and Tristan da Cunha|Saint Helena
Saint Kitts and Nevis|St. Kitts and Nevis
Saint Lucia|St. Lucia
Saint Martin|Saint Martin (French part)|Saint Martin (French Part)|St. Martin (French part)
Saint Pierre and Miquelon
Saint Vincent and the Grenadines|St. Vincent and the Grenadines
Samoa|Western Samoa
San Marino
Sao Tome and Principe|São Tomé and Príncipe
Saudi Arabia
Senegal
Serbia
Seychelles
Sierra Leone
Singapore
Sint Maarten|Sint Maarten (Dutch part)
Slovakia|Slovak Republic
Slovenia
Solomon Islands
Somalia
South Africa
South Georgia and the South Sandwich Islands
South Sudan
Spain
Sri Lanka|Ceylon
Sudan
Suriname|Surinam
Svalbard and Jan Mayen
Sweden
Switzerland
Syria|Syrian Arab Republic
Taiwan|Taiwan, Province of China
Tajikistan
Tanzania|Tanzania, United Republic of|United Republic of Tanzania
Thailand
Timor-Leste|East Timor
Togo
Tokelau
Tonga
Trinidad and Tobago|Trinidad & Tobago
Tunisia
Turkey|Türkiye|Turkiye
Turkmenistan
Turks and Caicos Islands
Tuvalu
Uganda
Ukraine
United Arab Emirates|UAE|U.A.E.
United Kingdom|United Kingdom of Great Britain and Northern Ireland|UK|U.K.|Great Britain|Britain
United States|United States of America|USA|U.S.A.|US|U.S.
United States Minor Outlying Islands
Uruguay
Uzbekistan
Vanuatu
Venezuela|Venezuela (Bolivarian Republic of)|Venezuela, RB|Venezuela, Bolivarian Republic of
Vietnam|Viet Nam
British Virgin Islands|Virgin Islands (British)|Virgin Islands, British
U.S. Virgin Islands|Virgin Islands (U.S.)|US Virgin Islands|United States Virgin Islands
+Virgin Islands, U.S.
Wallis and Futuna|Wallis and Futuna Islands
Western Sahara
Yemen|Yemen, Rep.
Zambia
Zimbabwe|Rhodesia
Soviet Union|USSR|U.S.S.R.
Yugoslavia
Czechoslovakia
West Germany|Germany, West|Federal Republic of Germany
East Germany|Germany, East|German Democratic Republic
England
Scotland
Wales
Northern Ireland
"""


def _slots_of(text: str) -> tuple[tuple[str, ...], ...]:
    """Slots of ``|``-separated spellings, one line a slot; a line starting with ``+``
    continues the slot above (a line of at most 100 characters)."""
    slots: list[list[str]] = []
    for line in text.strip().splitlines():
        if line.startswith("+"):
            slots[-1] += line[1:].split("|")
        else:
            slots.append(line.split("|"))
    return tuple(tuple(slot) for slot in slots)


COUNTRY_NAMES: tuple[tuple[str, ...], ...] = _slots_of(_COUNTRIES)
"""The ISO 3166-1 short names with their common alternatives, five former states, and the
four countries of the United Kingdom (written as a country of birth in census tables)."""


# the current ISO 3166-1 codes (249 countries and territories, in the order of their alpha-2
# code), then Kosovo's user-assigned XK / XKX (the European Commission's and the World
# Bank's); each slot one code, written in capitals only
COUNTRY_CODES_2: tuple[tuple[str, ...], ...] = tuple(
    (c,)
    for c in (
        "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO "
        "BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ "
        "DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP "
        "GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG "
        "KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML "
        "MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE "
        "PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL "
        "SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM "
        "US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK"
    ).split()
)
"""The ISO 3166-1 alpha-2 country codes (``AT``, ``NA``) and Kosovo's ``XK``."""

COUNTRY_CODES_3: tuple[tuple[str, ...], ...] = tuple(
    (c,)
    for c in (
        "AND ARE AFG ATG AIA ALB ARM AGO ATA ARG ASM AUT AUS ABW ALA AZE BIH BRB BGD BEL BFA BGR "
        "BHR BDI BEN BLM BMU BRN BOL BES BRA BHS BTN BVT BWA BLR BLZ CAN CCK COD CAF COG CHE CIV "
        "COK CHL CMR CHN COL CRI CUB CPV CUW CXR CYP CZE DEU DJI DNK DMA DOM DZA ECU EST EGY ESH "
        "ERI ESP ETH FIN FJI FLK FSM FRO FRA GAB GBR GRD GEO GUF GGY GHA GIB GRL GMB GIN GLP GNQ "
        "GRC SGS GTM GUM GNB GUY HKG HMD HND HRV HTI HUN IDN IRL ISR IMN IND IOT IRQ IRN ISL ITA "
        "JEY JAM JOR JPN KEN KGZ KHM KIR COM KNA PRK KOR KWT CYM KAZ LAO LBN LCA LIE LKA LBR LSO "
        "LTU LUX LVA LBY MAR MCO MDA MNE MAF MDG MHL MKD MLI MMR MNG MAC MNP MTQ MRT MSR MLT MUS "
        "MDV MWI MEX MYS MOZ NAM NCL NER NFK NGA NIC NLD NOR NPL NRU NIU NZL OMN PAN PER PYF PNG "
        "PHL PAK POL SPM PCN PRI PSE PRT PLW PRY QAT REU ROU SRB RUS RWA SAU SLB SYC SDN SWE SGP "
        "SHN SVN SJM SVK SLE SMR SEN SOM SUR SSD STP SLV SXM SYR SWZ TCA TCD ATF TGO THA TJK TKL "
        "TLS TKM TUN TON TUR TTO TUV TWN TZA UKR UGA UMI USA URY UZB VAT VCT VEN VGB VIR VNM VUT "
        "WLF WSM YEM MYT ZAF ZMB ZWE XKX"
    ).split()
)
"""The ISO 3166-1 alpha-3 country codes (``AUT``, ``NAM``) and Kosovo's ``XKX``, in the
order of :data:`COUNTRY_CODES_2`."""


def _style(pairs: str) -> dict[str, str]:
    """A style's names from ``first spelling = the style's name`` lines."""
    return dict(tuple(p.strip() for p in line.split(" = ")) for line in pairs.strip().splitlines())  # type: ignore[misc]


# The names three public lists write where they differ from a place's first spelling; a
# place not named here is written by its first spelling in that style (one spelling: every
# style). Each name is a spelling of its place's slot in :data:`COUNTRY_NAMES`.
COUNTRY_STYLES: dict[str, dict[str, str]] = {
    # the UN Statistics Division's M49 list ("Standard country or area codes for statistical
    # use", English names; as datasets/country-codes copies it, UNSD-en.csv)
    "UN M49": _style("""
        Bolivia = Bolivia (Plurinational State of)
        Brunei = Brunei Darussalam
        Hong Kong = China, Hong Kong Special Administrative Region
        Macao = China, Macao Special Administrative Region
        North Korea = Democratic People's Republic of Korea
        South Korea = Republic of Korea
        Falkland Islands = Falkland Islands (Malvinas)
        Iran = Iran (Islamic Republic of)
        Laos = Lao People's Democratic Republic
        Micronesia = Micronesia (Federated States of)
        Moldova = Republic of Moldova
        Palestine = State of Palestine
        Russia = Russian Federation
        Saint Helena, Ascension and Tristan da Cunha = Saint Helena
        Saint Martin = Saint Martin (French Part)
        Sint Maarten = Sint Maarten (Dutch part)
        Syria = Syrian Arab Republic
        Tanzania = United Republic of Tanzania
        Turkey = Türkiye
        United Kingdom = United Kingdom of Great Britain and Northern Ireland
        United States = United States of America
        U.S. Virgin Islands = United States Virgin Islands
        Venezuela = Venezuela (Bolivarian Republic of)
        Vietnam = Viet Nam
        Wallis and Futuna = Wallis and Futuna Islands
    """),
    # ISO 3166-1's English short names in their list form (the ISO 3166 Maintenance Agency's,
    # as Debian's iso-codes and pycountry write them: "Korea, Republic of")
    "ISO 3166-1": _style("""
        Bolivia = Bolivia, Plurinational State of
        Brunei = Brunei Darussalam
        Democratic Republic of the Congo = Congo, The Democratic Republic of the
        Holy See = Holy See (Vatican City State)
        Iran = Iran, Islamic Republic of
        North Korea = Korea, Democratic People's Republic of
        South Korea = Korea, Republic of
        Laos = Lao People's Democratic Republic
        Micronesia = Micronesia, Federated States of
        Moldova = Moldova, Republic of
        Palestine = Palestine, State of
        Russia = Russian Federation
        Saint Martin = Saint Martin (French part)
        Sint Maarten = Sint Maarten (Dutch part)
        Syria = Syrian Arab Republic
        Taiwan = Taiwan, Province of China
        Tanzania = Tanzania, United Republic of
        Turkey = Türkiye
        Venezuela = Venezuela, Bolivarian Republic of
        Vietnam = Viet Nam
        British Virgin Islands = Virgin Islands, British
        U.S. Virgin Islands = Virgin Islands, U.S.
        Falkland Islands = Falkland Islands (Malvinas)
    """),
    # the World Bank's World Development Indicators (its country names, WDI's Country table)
    "World Bank": _style("""
        Bahamas = Bahamas, The
        Brunei = Brunei Darussalam
        Democratic Republic of the Congo = Congo, Dem. Rep.
        Congo = Congo, Rep.
        Côte d'Ivoire = Cote d'Ivoire
        Curaçao = Curacao
        Egypt = Egypt, Arab Rep.
        Gambia = Gambia, The
        Hong Kong = Hong Kong SAR, China
        Iran = Iran, Islamic Rep.
        North Korea = Korea, Dem. People's Rep.
        South Korea = Korea, Rep.
        Kyrgyzstan = Kyrgyz Republic
        Laos = Lao PDR
        Macao = Macao SAR, China
        Micronesia = Micronesia, Fed. Sts.
        Russia = Russian Federation
        Saint Kitts and Nevis = St. Kitts and Nevis
        Saint Lucia = St. Lucia
        Saint Martin = St. Martin (French part)
        Saint Vincent and the Grenadines = St. Vincent and the Grenadines
        Sint Maarten = Sint Maarten (Dutch part)
        Slovakia = Slovak Republic
        Syria = Syrian Arab Republic
        Turkey = Turkiye
        Venezuela = Venezuela, RB
        U.S. Virgin Islands = Virgin Islands (U.S.)
        Palestine = West Bank and Gaza
        Yemen = Yemen, Rep.
    """),
}
"""The country names' writing styles (``docs/learn.md``, "Country names written in one
style"): style -> {a place's first spelling: the style's name of it}, from the public lists
named above. The usual short names (each place's first spelling) are the default style."""
